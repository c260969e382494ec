import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nodeEnv } from '../../bench/lib/chat-node.ts';

test("the benched node gets BENCH_CHAT_* as CHAT_*, never the caller's CHAT_*, and the bench's own settings win", () => {
  const saved = { ...process.env };
  try {
    process.env.CHAT_SQLITE_MODE = 'shared-file';
    process.env.BENCH_CHAT_SQLITE_WRITER = 'inline';
    process.env.BENCH_CHAT_PORT = '1';
    const env = nodeEnv(4321, '/tmp/data');
    assert.equal(env.CHAT_SQLITE_WRITER, 'inline');
    assert.equal(env.CHAT_SQLITE_MODE, undefined, "the caller's own CHAT_ settings are not inherited");
    assert.equal(env.CHAT_PORT, '4321', 'what the bench fixes cannot be changed');
    assert.equal(env.CHAT_DATA_DIR, '/tmp/data');
    assert.equal(env.BENCH_CHAT_SQLITE_WRITER, undefined);
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
});
