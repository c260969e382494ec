/**
 * Lua scripts: every multi-step Redis operation lives in a `.lua` file beside the driver that
 * uses it, read once at start and registered with `defineCommand` (EVALSHA, falling back to EVAL
 * after a SCRIPT FLUSH or on a fresh server). On a Redis Cluster a script runs on the master of
 * its keys' slot: every script takes only keys that share a hash tag, and touches no other key.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../config/paths.ts';
import type { RedisClient } from './client.ts';

const cache = new Map<string, string>();

/** The text of `src/<relative>`, read once per process. Works from src/ (tsx) and dist/ alike. */
export function luaSource(relative: string): string {
  let text = cache.get(relative);
  if (text === undefined) {
    text = fs.readFileSync(path.join(PROJECT_ROOT, 'src', relative), 'utf8');
    cache.set(relative, text);
  }
  return text;
}

/** Registers `src/<relative>` as `redis[name]`, taking `numberOfKeys` keys. Idempotent. */
export function defineScript(redis: RedisClient, name: string, relative: string, numberOfKeys: number): void {
  if (typeof (redis as unknown as Record<string, unknown>)[name] === 'function') return;
  redis.defineCommand(name, { numberOfKeys, lua: luaSource(relative) });
}
