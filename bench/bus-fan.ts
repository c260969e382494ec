/**
 * The `bus-fan` scenario: Redis's CPU per GROUP message of the bus alone (issue 16 item 3), with a
 * stream per member channel and with the fan log (docs/bus.md), for 10 and 50 members, beside
 * what one bare command round trip costs Redis on this machine (the floor of "one round trip").
 *
 * One fresh redis-server (pinned to the target CPU), three bus instances in this process (the
 * three nodes of a cluster), every member channel of 10 GROUP conversations followed on one of
 * them (round robin), then BENCH_FAN_RATE (600) publishMany/s for BENCH_SECONDS from the three in
 * turn, the conversation as the key; Redis CPU is `used_cpu_sys + used_cpu_user` of INFO cpu
 * before and after, per message. Every delivery is counted (none may be missing). The floor: PINGs
 * one at a time, back to back and one per millisecond, and 2,000 pipelined (a busy Redis).
 * BENCH_FAN_ARMS=fan measures the fan log alone (for rates the per-channel streams cannot take).
 */
import { spawn, spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { createBus } from '../src/bus/index.ts';
import { redisFactory } from '../src/redis/client.ts';
import { BenchError } from './lib/errors.ts';
import { freePort, pinnedCommand, track } from './lib/processes.ts';
import { goal, type Scenario } from './lib/scenario.ts';

interface Event {
  n: number;
  body: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function redisCpu(admin: Redis): Promise<number> {
  const info = await admin.info('cpu');
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  return field('used_cpu_sys') + field('used_cpu_user');
}

async function run(url: string, admin: Redis, fan: boolean, members: number, rate: number, seconds: number): Promise<{ us: number; missing: number }> {
  const prefix = `bench-fan:${Math.random().toString(36).slice(2)}:`;
  const nodes = [0, 1, 2].map((i) =>
    createBus<Event, string>({ driver: 'redis', redis: redisFactory({ url, keyPrefix: '' }), keyPrefix: prefix, nodeId: `n${i}`, ...(fan ? { fan: { shards: 1, fanned: (c: string) => c.startsWith('user:') } } : {}) }),
  );
  try {
    const groups = Array.from({ length: 10 }, (_, g) => Array.from({ length: members }, (_, m) => `user:acme:g${g}m${m}`));
    let delivered = 0;
    groups.flat().forEach((ch, i) => nodes[i % 3]!.subscribe(ch, () => void delivered++));
    await Promise.all(groups.flat().map((ch, i) => nodes[i % 3]!.head(ch)));
    await sleep(300);
    const total = rate * seconds;
    const before = await redisCpu(admin);
    const start = Date.now();
    for (let k = 0; k < total; k += 1) {
      const g = k % 10;
      // An overloaded arm may still have publishes on their way when its buses close: those fail
      // (counted as missing deliveries), and must not end the bench as unhandled rejections.
      nodes[k % 3]!.publishMany(groups[g]!, { n: k, body: 'a group chat message of a typical length, with a few words in it' }, `conversation-${g}`).catch(() => undefined);
      const wait = start + ((k + 1) * 1000) / rate - Date.now();
      if (wait > 1) await sleep(wait);
    }
    const deadline = Date.now() + 30_000;
    while (delivered < total * members && Date.now() < deadline) await sleep(20);
    const after = await redisCpu(admin);
    return { us: Math.round(((after - before) / total) * 1e7) / 10, missing: total * members - delivered };
  } finally {
    await Promise.all(nodes.map((n) => n.close()));
  }
}

async function pingCost(admin: Redis, conn: Redis, mode: 'pipelined' | 'back-to-back' | 'paced'): Promise<number> {
  const n = 2000;
  const before = await redisCpu(admin);
  if (mode === 'pipelined') await Promise.all(Array.from({ length: n }, () => conn.ping()));
  for (let i = 0; mode !== 'pipelined' && i < n; i += 1) {
    await conn.ping();
    if (mode === 'paced') await sleep(1);
  }
  const after = await redisCpu(admin);
  return Math.round(((after - before) / n) * 1e7) / 10;
}

export const scenario: Scenario = {
  name: 'bus-fan',
  description: "Redis CPU per GROUP message of the bus alone: a stream per member channel vs the fan log, 10 and 50 members, 3 nodes; and a bare command's round trip (the floor)",
  async run(settings, log) {
    const rate = Number(process.env.BENCH_FAN_RATE ?? 600);
    if (!Number.isInteger(rate) || rate < 1 || rate > 20_000) throw new BenchError(`BENCH_FAN_RATE must be an integer from 1 to 20000 (got "${process.env.BENCH_FAN_RATE}")`);
    // BENCH_FAN_ARMS: `channels,fan` (default) or one of them (a stream per member channel cannot
    // keep up at a few thousand messages/s: measure the fan log alone there).
    const armNames = (process.env.BENCH_FAN_ARMS ?? 'channels,fan').split(',').map((a) => a.trim());
    if (armNames.length === 0 || armNames.some((a) => a !== 'channels' && a !== 'fan')) throw new BenchError(`BENCH_FAN_ARMS must list channels and/or fan (got "${process.env.BENCH_FAN_ARMS}")`);
    const arms = [false, true].filter((fan) => armNames.includes(fan ? 'fan' : 'channels'));
    const port = await freePort();
    const [command, args] = pinnedCommand('target', 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning']);
    const proc = spawn(command, args, { stdio: 'ignore' });
    track(proc);
    const url = `redis://127.0.0.1:${port}`;
    for (let i = 0; ; i += 1) {
      const probe = spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' });
      if (probe.stdout.trim() === 'PONG') break;
      if (i > 100) throw new BenchError(`redis-server on ${port} did not start`);
      await sleep(100);
    }
    const admin = new Redis(url);
    const conn = new Redis(url);
    try {
      await Promise.all([admin.ping(), conn.ping()]);
      log(`redis on ${port}; the floor: one PING at a time`);
      const ping = await pingCost(admin, conn, 'back-to-back');
      const pingPaced = await pingCost(admin, conn, 'paced');
      const pingPipelined = await pingCost(admin, conn, 'pipelined');
      const figures: Record<string, number> = { redis_cpu_us_per_ping: ping, redis_cpu_us_per_ping_paced: pingPaced, redis_cpu_us_per_ping_pipelined: pingPipelined };
      let missing = 0;
      for (const members of [10, 50]) {
        for (const fan of arms) {
          const name = `${fan ? 'fan' : 'channels'}_${members}`;
          log(`${name}: ${rate} messages/s of ${members} members for ${settings.seconds} s through 3 nodes`);
          const r = await run(url, admin, fan, members, rate, settings.seconds);
          log(`${name}: Redis ${r.us} µs per message${r.missing > 0 ? `, ${r.missing} deliveries missing` : ''}`);
          figures[`redis_cpu_us_per_message_${name}`] = r.us;
          missing += r.missing;
        }
      }
      figures.missing = missing;
      return {
        measurements: [],
        figures,
        goals: [...(arms.includes(true) ? [goal('redis_cpu_us_per_message_fan_10', figures.redis_cpu_us_per_message_fan_10!, '<=', 30)] : []), goal('missing', missing, '<=', 0)],
        notes: [
          'channels_N: a stream per member channel (a publish script per member); fan_N: the fan log, one shard (CHAT_REDIS_FAN_SHARDS=1): one script per message, read by each node',
          'redis_cpu_us_per_ping(_paced): Redis CPU of one PING round trip, back to back (paced: one per ms): what any one command costs Redis here before it does anything',
          'redis_cpu_us_per_ping_pipelined: 2,000 PINGs sent at once: what a command costs a busy Redis, which reads many per wake-up',
        ],
      };
    } finally {
      admin.disconnect();
      conn.disconnect();
      proc.kill();
    }
  },
};
