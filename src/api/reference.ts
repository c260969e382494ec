/**
 * docs/reference.md, rendered from the OpenAPI document (schema/openapi.json): every operation
 * with its audience, scopes, capabilities, CORS policy, parameters, body and response fields and
 * error codes, after a short part written here (conventions, limits, versioning) that the
 * document cannot say. `npm run docs:api` rewrites the file; test/reference.test.ts fails when it
 * is stale, as test/openapi.test.ts does for the document itself.
 */
type Json = Record<string, unknown>;
type Schema = Json;

const CORS: Record<string, string> = {
  application: 'origins registered on the application\'s client',
  tenant: 'origins registered on any application client of the tenant',
  'public-read': 'any origin, GET only',
  none: 'none (the service\'s own web app only)',
};
const RATE_LIMITS: Record<string, string> = {
  send: '30 messages per 10 s per user (`CHAT_RATE_SEND`)',
  lookup: '20 lookups per 10 s per user (`CHAT_RATE_LOOKUP`)',
};

const code = (s: string): string => `\`${s}\``;
/** Text for a markdown table cell. */
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A schema's type, as words: `string (uuid)`, `one of "A", "B"`, `array of string`, `integer or null`. */
export function typeOf(s: Schema): string {
  if (typeof s.$ref === 'string') return s.$ref.split('/').at(-1) as string;
  if (s.const !== undefined) return JSON.stringify(s.const);
  const anyOf = s.anyOf as Schema[] | undefined;
  if (anyOf) {
    if (anyOf.every((x) => x.const !== undefined)) return `one of ${anyOf.map((x) => JSON.stringify(x.const)).join(', ')}`;
    const nonNull = anyOf.filter((x) => x.type !== 'null');
    const alternatives = nonNull.map(typeOf).join(' or ');
    return nonNull.length < anyOf.length ? `${alternatives} or null` : alternatives;
  }
  if (s.type === 'array') return `array of ${typeOf((s.items ?? {}) as Schema)}`;
  if (s.type === 'string' && typeof s.format === 'string') return `string (${s.format})`;
  return typeof s.type === 'string' ? s.type : 'any';
}

/** A schema's constraints, as words. */
export function rulesOf(s: Schema): string[] {
  const out: string[] = [];
  const range = (lo: unknown, hi: unknown, unit: string): void => {
    if (typeof lo === 'number' && typeof hi === 'number') out.push(`${lo} to ${hi}${unit}`);
    else if (typeof lo === 'number') out.push(`at least ${lo}${unit}`);
    else if (typeof hi === 'number') out.push(`at most ${hi}${unit}`);
  };
  range(s.minLength, s.maxLength, ' characters');
  range(s.minimum, s.maximum, '');
  range(s.minItems, s.maxItems, ' items');
  if (s.uniqueItems === true) out.push('no duplicates');
  if (typeof s.pattern === 'string') out.push(`pattern ${code(s.pattern)}`);
  const items = s.items as Schema | undefined;
  if (items && items.type !== 'object') for (const r of rulesOf(items)) out.push(`each: ${r}`);
  if (typeof s.description === 'string') out.push(s.description);
  return out;
}

interface FieldRow {
  name: string;
  type: string;
  required: boolean;
  rules: string;
}

/** The fields of an object schema, nested objects (and arrays of objects) as dotted names. */
export function fieldsOf(s: Schema, prefix = '', depth = 0): FieldRow[] {
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const required = new Set((s.required ?? []) as string[]);
  const rows: FieldRow[] = [];
  for (const [name, p] of Object.entries(props)) {
    const full = `${prefix}${name}`;
    const nested = objectOf(p);
    rows.push({ name: full, type: typeOf(p), required: required.has(name), rules: rulesOf(p).join('; ') });
    if (nested && depth < 4) rows.push(...fieldsOf(nested.schema, `${full}${nested.array ? '[]' : ''}.`, depth + 1));
  }
  return rows;
}

/** The object schema inside `s` (itself, its array items, or its non-null alternative). */
function objectOf(s: Schema): { schema: Schema; array: boolean } | null {
  if (s.type === 'object' && s.properties) return { schema: s, array: false };
  if (s.type === 'array') {
    const inner = objectOf((s.items ?? {}) as Schema);
    return inner ? { schema: inner.schema, array: true } : null;
  }
  const anyOf = s.anyOf as Schema[] | undefined;
  const objects = anyOf?.map(objectOf).filter((x) => x !== null) ?? [];
  return objects.length === 1 ? objects[0] ?? null : null;
}

function fieldTable(rows: FieldRow[], requiredWord: [string, string]): string[] {
  if (rows.length === 0) return ['No fields.'];
  return [
    `| Field | Type | ${requiredWord[0]} | Rules and meaning |`,
    '|---|---|---|---|',
    ...rows.map((r) => `| ${code(r.name)} | ${cell(r.type)} | ${r.required ? requiredWord[1] : '—'} | ${cell(r.rules)} |`),
  ];
}

const anchorOf = (op: Json): string => String(op.operationId).toLowerCase();

function operationSection(method: string, path: string, op: Json): string[] {
  const out: string[] = [`<a id="${anchorOf(op)}"></a>`, '', `### ${method.toUpperCase()} ${path}`, '', `${String(op.summary)}.`.replace(/\.\.$/, '.')];
  if (typeof op.description === 'string') out.push('', op.description);
  const audience = op['x-audience'] as string[];
  const scopes = op['x-required-scopes'] as { user?: string[]; machine?: string[] };
  const caps = op['x-required-capabilities'] as { all?: string[]; any?: string[] } | undefined;
  const facts: string[] = [`- **Who:** ${audience.join(', ')}${audience.includes('public') ? ' (no token)' : ''}.`];
  const scopeParts: string[] = [];
  if (scopes.user) scopeParts.push(`users ${scopes.user.map(code).join(', ')}`);
  if (scopes.machine) scopeParts.push(`machines any of ${scopes.machine.map(code).join(', ')}`);
  if (scopeParts.length > 0) facts.push(`- **Scopes:** ${scopeParts.join('; ')}.`);
  if (!audience.includes('public')) {
    facts.push(caps ? `- **Capabilities (users):** ${caps.all ? `all of ${caps.all.map(code).join(', ')}` : `any of ${(caps.any ?? []).map(code).join(', ')}`}.` : '- **Capabilities:** none beyond membership.');
  }
  facts.push(`- **Browser origins (CORS):** ${CORS[String(op['x-cors'])] ?? String(op['x-cors'])}.`);
  const rate = op['x-rate-limit'];
  if (typeof rate === 'string') facts.push(`- **Rate limit:** ${RATE_LIMITS[rate] ?? rate}.`);
  out.push('', ...facts);

  const params = (op.parameters ?? []) as Json[];
  if (params.length > 0) {
    out.push('', '| Parameter | In | Required | Type | Rules and meaning |', '|---|---|---|---|---|');
    for (const p of params) {
      const schema = p.schema as Schema;
      const rules = [...rulesOf(schema), ...(typeof p.description === 'string' ? [p.description] : [])];
      out.push(`| ${code(String(p.name))} | ${String(p.in)} | ${p.required === true ? 'yes' : '—'} | ${cell(typeOf(schema))} | ${cell(rules.join('; '))} |`);
    }
  }
  const body = op.requestBody as { required: boolean; content: { 'application/json': { schema: Schema } } } | undefined;
  if (body) {
    out.push('', body.required ? '**Request body** (JSON):' : '**Request body** (JSON; may be omitted entirely, which stands for `{}`):', '');
    out.push(...fieldTable(fieldsOf(body.content['application/json'].schema), ['Required', 'yes']));
  }
  const responses = op.responses as Record<string, { description: string; content?: { 'application/json': { schema: Schema } } }>;
  const statuses = Object.keys(responses);
  const success = statuses.find((s) => s.startsWith('2')) as string;
  const ok = responses[success];
  if (ok?.content) {
    out.push('', `**Success:** ${code(success)} with (JSON):`, '');
    out.push(...fieldTable(fieldsOf(ok.content['application/json'].schema), ['Present', 'always']));
  } else {
    out.push('', `**Success:** ${code(success)}, no body.`);
  }
  const errors = statuses.filter((s) => !s.startsWith('2')).map((s) => `${code(s)} ${(responses[s]?.description ?? '').replace(/^Error: /, '').split(', ').map(code).join(', ')}`);
  out.push('', `**Errors:** ${errors.join('; ')}.`);
  return out;
}

const HEAD = `# API reference

<!-- Generated by \`npm run docs:api\` (src/api/reference.ts) from schema/openapi.json. Do not edit by hand: test/reference.test.ts fails when this file is stale. -->

The complete reference of the chat service API, version 1, as this repository implements it,
generated from its OpenAPI document ([\`schema/openapi.json\`](../schema/openapi.json), also served
by every node at \`GET /openapi.json\`). It stands on its own; the decisions taken where the
service's contract leaves something open, with examples, are in [api.md](api.md); every error
code with its status and meaning in [errors.md](errors.md); tokens, scopes, capabilities, CORS
and rate limits in [authorization.md](authorization.md); the realtime stream and its events in
[realtime.md](realtime.md) and [events.md](events.md); presence and web push in
[presence.md](presence.md) and [push.md](push.md); obtaining tokens in
[identity-provider.md](identity-provider.md).

## Conventions

- **Base URL.** Every path below is relative to \`{base_url}\`, which ends in \`/api/v1\`
  (\`http://127.0.0.1:8080/api/v1\` for \`npm start\`).
- **Authentication.** \`Authorization: Bearer <access token>\` on every operation but the public
  one. A user token (\`chat:access\`) acts as a person; a machine token (a backend client's
  \`client_credentials\` grant, \`chat:sync\` or granular \`chat:*\` scopes) acts for its client, bound
  to one tenant and application. A missing, malformed, expired, unknown-signer or wrong-audience
  token is 401 \`invalid_token\`, a revoked one 401 \`token_revoked\`.
- **The context is the URL.** Tenant and application come from the path only, never from the
  token, a header or the body, and are checked with the identity provider on every call.
- **JSON.** Requests with a body send \`Content-Type: application/json\`; responses are JSON. Fields
  are snake_case; enum values UPPER_CASE (presence: \`online\`, \`offline\`); timestamps ISO-8601 in
  UTC (the realtime credential's \`expires\`: epoch milliseconds). A field without a value is
  present and \`null\`. A request field the operation does not accept is \`invalid_request\`.
- **Cursor paging.** Lists answer \`{items, next_cursor}\`; pass \`next_cursor\` as \`before\` for the
  next, older page (\`null\` on the last page). \`limit\` defaults to 50; larger than 100 is capped;
  anything but a positive integer is \`invalid_limit\`. Bounded lists answer \`{items}\` only.
- **Errors.** Every error, at any status, has this body; clients branch on \`error\`, never on
  \`message\`, and keep a fallback for codes they do not know:
`;

const TAIL = `
## Limits

| Limit | Value | Applies to |
|---|---|---|
| Request body | 256 kB; larger is 413 \`payload_too_large\` | every request with a body |
| Message body | 10,000 characters; longer is 400 \`body_too_long\` | send and edit message |
| Attachments | at most 10 per message; more is 400 \`too_many_attachments\` | send message |
| Page size | default 50, at most 100 (larger is capped); not a positive integer is 400 \`invalid_limit\` | cursor-paged lists |
| Backend client rate | 600 requests per 60 s per client | every operation, machine tokens |
| Message sending | 30 messages per 10 s per user | send message |
| User lookup | 20 lookups per 10 s per user | user lookup |
| User token lifetime | at most 10 minutes, no refresh token | user tokens |
| DIRECT conversation | exactly 2 members, never changed | create conversation, members |
| Retention | \`message_retention_days\` ≥ 1, or \`null\` for forever | settings |
| Push preview | the first 200 characters of the message | push notifications |

Over a rate limit the answer is 429 \`rate_limited\` with \`Retry-After\` (seconds). The rate limits
are the defaults; a deployment sets them (README's configuration table).

## Versioning

The version is part of the path (\`/api/v1\`). Version 1 grows without changing its path: new
operations, new optional request fields, new response fields, new enum values in responses, new
error codes and new event types or fields may appear at any time, so clients ignore unknown
fields and tolerate unknown enum values and error codes. Removing or renaming anything, changing a
field's type or meaning, making an optional request field required, rejecting what was accepted,
changing the status or code of a condition, or requiring a new scope or capability would need a
new version. Changes made to version 1 so far are listed under "What changed" in
[api.md](api.md#what-changed).
`;

export function renderReference(doc: Json): string {
  const out: string[] = [HEAD];
  const errorBody = ((doc.components as Json).schemas as Record<string, Schema>).ErrorBody as Schema;
  out.push(...fieldTable(fieldsOf(errorBody), ['Present', 'always']));
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const tags = (doc.tags as Array<{ name: string }>).map((t) => t.name);
  const byTag = new Map<string, Array<[string, string, Json]>>(tags.map((t) => [t, []]));
  for (const [p, ops] of Object.entries(paths)) for (const [m, op] of Object.entries(ops)) byTag.get((op.tags as string[])[0] as string)?.push([m, p, op]);

  out.push('', '## Operations', '', '| Operation | Who | Purpose |', '|---|---|---|');
  for (const ops of byTag.values()) {
    for (const [m, p, op] of ops) out.push(`| [${code(`${m.toUpperCase()} ${p}`)}](#${anchorOf(op)}) | ${(op['x-audience'] as string[]).join(', ')} | ${cell(String(op.summary))} |`);
  }
  for (const [tag, ops] of byTag) {
    if (ops.length === 0) continue;
    out.push('', `## ${tag}`);
    for (const [m, p, op] of ops) out.push('', ...operationSection(m, p, op));
  }
  out.push(TAIL);
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}
