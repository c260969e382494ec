/**
 * The `cassandra-sends` scenario: what a send costs on the Cassandra store, without HTTP. The
 * node's ActorHost (the actors every route handler calls, a local bus, no push jobs) writes to a
 * CassandraChatStore in a fresh keyspace of a real server; BENCH_CONNECTIONS (64 unless set)
 * senders in a closed loop call host.sendMessage:
 *
 *  (a) hot: every sender on ONE conversation (how fast one busy conversation can go: its sends
 *      are ordered by one actor, and the store's per-message cost on its one partition shows);
 *  (b) spread: each send to a random one of 200 conversations;
 *  (c, d) the same two with a caller-chosen message_id per send (what an Idempotency-Key gives):
 *      the store binds each such id with one LWT (message_by_id), the price of exactly-once
 *      retries; unkeyed sends take none.
 *
 * Per phase: sends/s, send latency p50/p99 (from the call to the answer), CPU per send of this
 * process (the actors, the store driver, cassandra-driver) and of the Cassandra JVMs (/proc; also
 * net of what they burn idle, measured for 5 s before the phases: at low rates that background is
 * most of a raw figure), and the statements per send by kind (lwt = a Paxos round). After the phases, the hot
 * conversation's history must hold exactly the sends that were answered.
 *
 * Cassandra: a node of its own, or BENCH_CASSANDRA_CONTACT_POINTS (bench/lib/cassandra.ts). On a
 * machine shared with other work, prefer the CPU-per-send figures to the rates, and say so.
 */
import { randomUUID } from 'node:crypto';
import { ActorHost } from '../src/actors/index.ts';
import type { ChatBus } from '../src/actors/index.ts';
import { createBus } from '../src/bus/index.ts';
import { CassandraChatStore } from '../src/store/cassandra/cassandra-store.ts';
import type { StatementCounts } from '../src/store/cassandra/cql.ts';
import type { ConversationRef } from '../src/store/index.ts';
import { benchCassandra, dropKeyspace, idleCores, jvmCpuSeconds } from './lib/cassandra.ts';
import { BenchError } from './lib/errors.ts';
import type { BenchSettings, Scenario } from './lib/scenario.ts';

const CTX = { tenant_id: 'bench', application_id: 'sends' };
const USERS = ['alice', 'bob', 'carol'];
const SPREAD = 200;
const DEFAULT_SENDERS = 64;
const BODY = 'lorem ipsum dolor sit amet '.repeat(8);
const IDLE_SECONDS = 5;

interface Phase {
  sends: number;
  seconds: number;
  p50_ms: number;
  p99_ms: number;
  node_cpu_us: number;
  cassandra_cpu_us: number;
  /** The same, without what the JVMs burn when idle (gossip, compaction, GC of nothing) over the phase. */
  cassandra_net_cpu_us: number;
  lwt: number;
  plain: number;
  batches: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const round = (n: number, digits = 2): number => Number(n.toFixed(digits));

async function sendLoop(host: ActorHost, refs: ConversationRef[], senders: number, seconds: number, keyed: boolean): Promise<{ sends: number; latencies: Float64Array }> {
  const deadline = performance.now() + seconds * 1000;
  const latencies: number[] = [];
  let n = 0;
  const lane = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const ref = refs.length === 1 ? refs[0]! : refs[Math.floor(Math.random() * refs.length)]!;
      const started = performance.now();
      await host.sendMessage(ref, {
        sender_user_id: USERS[n % USERS.length]!,
        sender_client_id: null,
        body: `${n} ${BODY}`,
        message_type: 'TEXT',
        // A caller-chosen id, as an Idempotency-Key gives: the store binds it with one LWT.
        ...(keyed ? { message_id: randomUUID() } : {}),
      });
      latencies.push(performance.now() - started);
      n += 1;
    }
  };
  await Promise.all(Array.from({ length: senders }, lane));
  return { sends: n, latencies: Float64Array.from(latencies).sort() };
}

async function measure(host: ActorHost, store: CassandraChatStore, pids: number[], idle: number, refs: ConversationRef[], senders: number, s: BenchSettings, keyed: boolean): Promise<Phase> {
  if (s.warmupSeconds > 0) await sendLoop(host, refs, senders, s.warmupSeconds, keyed);
  const counts0: StatementCounts = store.statementCounts();
  const cpu0 = process.cpuUsage();
  const jvm0 = jvmCpuSeconds(pids);
  const t0 = performance.now();
  const { sends, latencies } = await sendLoop(host, refs, senders, s.seconds, keyed);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const jvm = jvmCpuSeconds(pids) - jvm0;
  const counts = store.statementCounts();
  if (sends === 0) throw new BenchError('no send completed');
  return {
    sends,
    seconds,
    p50_ms: percentile(latencies, 50),
    p99_ms: percentile(latencies, 99),
    node_cpu_us: (cpu.user + cpu.system) / sends,
    cassandra_cpu_us: (jvm * 1e6) / sends,
    cassandra_net_cpu_us: (Math.max(0, jvm - idle * seconds) * 1e6) / sends,
    lwt: (counts.lwt - counts0.lwt) / sends,
    plain: (counts.plain - counts0.plain) / sends,
    batches: (counts.batches - counts0.batches) / sends,
  };
}

/** Every message of the conversation, by paging its history. */
async function historyCount(store: CassandraChatStore, ref: ConversationRef): Promise<number> {
  let n = 0;
  let after: { seq: number } | null = null;
  for (;;) {
    const page = await store.messages.list({ ...ref, viewer_user_id: null, limit: 100, after });
    if (!page) throw new BenchError('the hot conversation is gone');
    n += page.items.length;
    if (!page.next) return n;
    after = page.next;
  }
}

export const scenario: Scenario = {
  name: 'cassandra-sends',
  description: 'sends through the actor host on the Cassandra store: one hot conversation, then a spread of 200 (sends/s, p50/p99, CPU and statements per send)',
  async run(settings, log) {
    const senders = process.env.BENCH_CONNECTIONS ? settings.connections : DEFAULT_SENDERS;
    const cassandra = await benchCassandra(log);
    const keyspace = `bench_sends_${process.pid}`;
    const store = await CassandraChatStore.open({
      driver: 'cassandra', contactPoints: cassandra.contactPoints, localDataCenter: cassandra.localDataCenter, keyspace,
      replicationFactor: Math.min(3, cassandra.pids.length),
    });
    const bus = createBus({ driver: 'local' }) as ChatBus;
    const host = new ActorHost({ store, bus, enqueuePush: false });
    try {
      const create = async (): Promise<ConversationRef> => {
        const { conversation } = await host.createConversation({
          ...CTX, type: 'GROUP', name: 'bench', description: null, created_by_user_id: USERS[0]!, created_by_client_id: null, member_user_ids: USERS,
        });
        return { ...CTX, conversation_id: conversation.conversation_id };
      };
      const hot = [await create()];
      const spread: ConversationRef[] = [];
      for (let i = 0; i < SPREAD; i += 1) spread.push(await create());
      const idle = await idleCores(cassandra.pids, IDLE_SECONDS);
      log(`cassandra idle: ${(idle * 100).toFixed(1)}% of a core`);
      const phases: Record<string, Phase> = {};
      const plan = [
        ['hot', hot, false],
        ['spread', spread, false],
        ['hot_keyed', hot, true],
        ['spread_keyed', spread, true],
      ] as const;
      for (const [name, refs, keyed] of plan) {
        log(`${name}: ${senders} senders on ${refs.length} conversation(s)${keyed ? ', each send with its own message_id (an Idempotency-Key)' : ''}, ${settings.warmupSeconds}s warm-up + ${settings.seconds}s`);
        phases[name] = await measure(host, store, cassandra.pids, idle, refs, senders, settings, keyed);
      }
      const stored = await historyCount(store, hot[0]!);
      const answered = (await store.conversations.get(hot[0]!, { kind: 'machine' }, 0))?.last_seq ?? -1;
      if (stored < phases.hot!.sends + phases.hot_keyed!.sends) throw new BenchError(`the hot conversation holds ${stored} messages, fewer than the ${phases.hot!.sends + phases.hot_keyed!.sends} measured sends`);
      const figures: Record<string, number> = {};
      for (const [name, p] of Object.entries(phases)) {
        figures[`${name}_sends_per_s`] = Math.round(p.sends / p.seconds);
        figures[`${name}_p50_ms`] = round(p.p50_ms);
        figures[`${name}_p99_ms`] = round(p.p99_ms);
        figures[`${name}_node_cpu_us`] = Math.round(p.node_cpu_us);
        figures[`${name}_cassandra_cpu_us`] = Math.round(p.cassandra_cpu_us);
        figures[`${name}_cassandra_net_cpu_us`] = Math.round(p.cassandra_net_cpu_us);
        figures[`${name}_lwt_per_send`] = round(p.lwt, 3);
        figures[`${name}_plain_per_send`] = round(p.plain, 2);
        figures[`${name}_batches_per_send`] = round(p.batches, 2);
      }
      figures.hot_stored = stored;
      figures.hot_last_seq = answered;
      figures.senders = senders;
      figures.cassandra_idle_cores = round(idle, 3);
      return {
        measurements: [],
        figures,
        goals: [],
        notes: [`Cassandra JVMs ${cassandra.pids.join(',')} at ${cassandra.contactPoints.join(',')}; keyspace ${keyspace} (dropped after the run)`],
      };
    } finally {
      await host.close();
      await store.close();
      await bus.close();
      await dropKeyspace(cassandra, keyspace).catch((e: unknown) => log(`could not drop ${keyspace}: ${String(e)}`));
      await cassandra.stop();
    }
  },
};
