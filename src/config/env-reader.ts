/**
 * Reading settings from the environment: every reader answers a usable value and records a
 * problem instead of throwing, so a bad configuration is reported whole, one line per setting.
 * Shared by the node's configuration and the benches' settings.
 */
import fs from 'node:fs';
import path from 'node:path';

export type Env = Record<string, string | undefined>;

export interface EnvReader {
  /** The value, or `fallback` when unset or empty. */
  str(name: string, fallback: string): string;
  /** An integer from `min` to `max`. */
  int(name: string, fallback: number, min: number, max: number): number;
  /** 1/true/on/yes or 0/false/off/no. */
  bool(name: string, fallback: boolean): boolean;
  /** `value` checked as an absolute http(s) URL, trailing slashes removed. */
  url(name: string, value: string): string;
  /** An absolute path to a file that exists, or null when unset. */
  file(name: string): string | null;
}

export function envReader(env: Env, problems: string[]): EnvReader {
  return {
    str(name, fallback) {
      const v = env[name];
      return v === undefined || v === '' ? fallback : v;
    },
    int(name, fallback, min, max) {
      const raw = env[name];
      if (raw === undefined || raw === '') return fallback;
      if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
        problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
        return fallback;
      }
      return Number(raw);
    },
    bool(name, fallback) {
      const raw = env[name];
      if (raw === undefined || raw === '') return fallback;
      if (['1', 'true', 'on', 'yes'].includes(raw)) return true;
      if (['0', 'false', 'off', 'no'].includes(raw)) return false;
      problems.push(`${name} must be true or false (got "${raw}")`);
      return fallback;
    },
    url(name, value) {
      try {
        const u = new URL(value);
        if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
        return value.replace(/\/+$/, '');
      } catch {
        problems.push(`${name} must be an absolute http(s) URL (got "${value}")`);
        return value;
      }
    },
    file(name) {
      const raw = env[name];
      if (!raw) return null;
      const file = path.resolve(raw);
      if (!fs.existsSync(file)) problems.push(`${name} must name a readable file (got "${raw}")`);
      return file;
    },
  };
}
