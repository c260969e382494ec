/**
 * The length of `JSON.stringify(value)` computed by walking the value instead of building the
 * string: the local bus charges each event its JSON length against the window's byte bound, and
 * serializing every event just to measure it cost a string of the event's size per publish.
 *
 * Exact for what events hold (plain objects, arrays, strings without characters JSON escapes,
 * finite numbers, booleans, null; `undefined` and functions skipped in objects and `null` in
 * arrays, as JSON.stringify does). A string with characters JSON escapes (quotes, backslashes,
 * control characters) counts each of those once more (`\"`), \u-escaped control characters
 * slightly less than their six characters: close enough for a memory bound. `toJSON` is not
 * called (events have none). Nesting deeper than 64 levels counts as nothing.
 */
export function jsonSize(value: unknown): number {
  return size(value, 0);
}

function size(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string':
      return stringSize(value);
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4;
    case 'boolean':
      return value ? 4 : 5;
    case 'bigint':
      return 0; // JSON.stringify throws on these; events never hold one
    case 'object': {
      if (value === null) return 4;
      if (depth >= 64) return 0;
      if (Array.isArray(value)) {
        let n = 2 + Math.max(value.length - 1, 0);
        for (const item of value) n += item === undefined || typeof item === 'function' || typeof item === 'symbol' ? 4 : size(item, depth + 1);
        return n;
      }
      let n = 2;
      let fields = 0;
      const record = value as Record<string, unknown>;
      for (const key in record) {
        if (!Object.hasOwn(record, key)) continue;
        const v = record[key];
        if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
        n += stringSize(key) + 1 + size(v, depth + 1);
        fields += 1;
      }
      return n + Math.max(fields - 1, 0);
    }
    default:
      return 0;
  }
}

const ESCAPED = /["\\\u0000-\u001f]/;

function stringSize(s: string): number {
  let n = s.length + 2;
  if (!ESCAPED.test(s)) return n;
  for (let i = 0; i < s.length; i += 1) {
    const c = s.charCodeAt(i);
    if (c === 34 || c === 92 || c < 32) n += 1;
  }
  return n;
}
