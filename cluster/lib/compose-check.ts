/**
 * Static checks of docker-compose.cluster.yml, since no Docker engine runs where the tests do:
 * every variable it sets is one the chat node (src/config/) or the IdP (src/idp/main.ts)
 * reads — a misspelt name would be silently ignored and the default used — and every service it
 * names (depends_on, URLs, contact points, HAProxy's servers) exists.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

export type Env = Record<string, string>;

export interface ComposeService {
  name: string;
  /** Runs this repository's image (the chat node or the IdP): its variables are checked. */
  ours: boolean;
  environment: Env;
  envFile: string[];
  dependsOn: string[];
  volumes: string[];
  command: string[] | string | null;
}

/** The variable names a source file reads: quoted `'CHAT_X'` / `env.CHAT_X` occurrences. */
export function envNamesIn(source: string, prefix: string): Set<string> {
  const names = new Set<string>();
  const re = new RegExp(`(?:['"\`]|env\\.)(${prefix}[A-Z0-9_]+)`, 'g');
  for (const m of source.matchAll(re)) if (m[1]) names.add(m[1]);
  return names;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function envOf(v: unknown): Env {
  const out: Env = {};
  if (Array.isArray(v)) {
    for (const item of v) {
      const [k, ...rest] = String(item).split('=');
      if (k) out[k] = rest.join('=');
    }
  } else if (isRecord(v)) {
    for (const [k, val] of Object.entries(v)) out[k] = val === null ? '' : String(val);
  }
  return out;
}

const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : isRecord(v) ? Object.keys(v) : []);

export function loadCompose(file: string): ComposeService[] {
  // merge: the file shares node settings through YAML merge keys (`<<: *node-env`), as Compose does.
  const doc: unknown = parse(fs.readFileSync(file, 'utf8'), { merge: true });
  if (!isRecord(doc) || !isRecord(doc.services)) throw new Error(`${file} has no services`);
  return Object.entries(doc.services).map(([name, raw]) => {
    const s = isRecord(raw) ? raw : {};
    const envFile = list(s.env_file);
    return {
      name,
      ours: s.build !== undefined || s.image === 'chat-node:local',
      environment: envOf(s.environment),
      envFile,
      dependsOn: list(s.depends_on),
      volumes: list(s.volumes),
      command: Array.isArray(s.command) ? s.command.map(String) : typeof s.command === 'string' ? s.command : null,
    };
  });
}

/** `KEY=value` lines, comments and blanks skipped (the subset of the .env format we write). */
export function parseDotenv(text: string): Env {
  const out: Env = {};
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (m?.[1]) out[m[1]] = m[2] ?? '';
  }
  return out;
}

/** Host names a node's settings point at: each must be a service of the file. */
export function hostsReferenced(env: Env): string[] {
  const hosts: string[] = [];
  for (const name of ['CHAT_REDIS_URL', 'CHAT_IDP_URL', 'CHAT_INTERNAL_URL']) {
    const v = env[name];
    if (v) hosts.push(new URL(v).hostname);
  }
  for (const p of (env.CHAT_CASSANDRA_CONTACT_POINTS ?? '').split(',').map((s) => s.trim()).filter(Boolean)) hosts.push(p.split(':')[0] ?? p);
  return hosts;
}

/** `server <name> <host>:<port>` lines of an HAProxy configuration. */
export function haproxyServerHosts(cfg: string): string[] {
  return [...cfg.matchAll(/^\s*server\s+\S+\s+([^\s:]+):\d+/gm)].map((m) => m[1] ?? '');
}

export interface ComposeCheckInput {
  services: ComposeService[];
  chatNames: Set<string>;
  idpNames: Set<string>;
  haproxyCfg: string;
  /** The repository root: bind-mounted files (`./...`) must exist there. */
  root?: string;
}

export function checkCompose(i: ComposeCheckInput): string[] {
  const problems: string[] = [];
  const names = new Set(i.services.map((s) => s.name));
  for (const s of i.services) {
    // Other images (Grafana, ...) read variables of their own.
    if (s.ours) for (const key of Object.keys(s.environment)) {
      const known = key.startsWith('CHAT_') ? i.chatNames.has(key) : key.startsWith('IDP_') ? i.idpNames.has(key) : false;
      if (!known) problems.push(`${s.name}: ${key} is read by neither the chat node nor the IdP`);
    }
    for (const d of s.dependsOn) if (!names.has(d)) problems.push(`${s.name}: depends_on names no service "${d}"`);
    for (const h of hostsReferenced(s.environment)) if (!names.has(h)) problems.push(`${s.name}: points at "${h}", which is no service`);
  }
  for (const h of haproxyServerHosts(i.haproxyCfg)) if (!names.has(h)) problems.push(`haproxy config: server "${h}" is no service`);
  if (i.root !== undefined) {
    for (const s of i.services) {
      for (const v of s.volumes) {
        const host = v.split(':')[0] ?? '';
        if (host.startsWith('./') && !fs.existsSync(path.join(i.root, host))) problems.push(`${s.name}: mounts ${host}, which the repository does not have`);
      }
    }
  }
  return problems;
}
