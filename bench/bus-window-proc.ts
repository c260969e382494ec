/**
 * One measurement of `npm run bench -- bus-window` (bench/bus-window.ts runs it in a fresh
 * process with --expose-gc): holds BUS_WINDOW_EVENTS chat events either in the in-process bus's
 * resume window (LocalStreams: JSON in an off-heap byte ring) or as plain objects in an array (what the
 * window held before), then prints one JSON line: heap bytes per held event, off-heap bytes per
 * held event, and the pauses of full GCs with everything held.
 */
import { LocalStreams } from '../src/bus/local-streams.ts';

const mode = process.argv[2];
const N = Number(process.env.BUS_WINDOW_EVENTS ?? 100_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc || (mode !== 'window' && mode !== 'objects')) throw new Error('usage: node --expose-gc --import tsx bench/bus-window-proc.ts window|objects');

/** A message.created event of the shape the actors publish (~0.9 KB of JSON). */
function event(i: number): object {
  const at = new Date(1_700_000_000_000 + i).toISOString();
  const conversation_id = `0190f0c2-7d7a-7000-8000-${String(i % 1000).padStart(12, '0')}`;
  return {
    type: 'message.created', tenant_id: 'acme', application_id: 'support', conversation_id, seq: i, occurred_at: at,
    data: {
      message: {
        message_id: `0190f0c2-7d7a-7000-9000-${String(i).padStart(12, '0')}`, conversation_id, seq: i, sender_user_id: 'alice',
        sender_client_id: 'acme-support-backend', sender: { user_id: 'alice', display_name: 'Alice', avatar_url: null },
        body: `${'lorem ipsum dolor sit amet '.repeat(6)}${i}`, message_type: 'TEXT', status: 'ACTIVE', reply_to_message_id: null,
        attachments: [], mentioned_user_ids: [], reactions: [], created_at: at, edited_at: null, deleted_at: null,
      },
    },
  };
}

gc();
const before = process.memoryUsage();
let held: unknown;
const t0 = performance.now();
if (mode === 'objects') {
  const list: object[] = [];
  for (let i = 0; i < N; i += 1) list.push(event(i));
  held = list;
} else {
  const streams = new LocalStreams<object>({ maxEventsPerChannel: N, maxAgeMs: 3_600_000, maxTotalBytes: 2 ** 40, now: Date.now, onListenerError: () => {} });
  for (let i = 0; i < N; i += 1) streams.publish(`user:${i % 100}`, event(i));
  held = streams;
}
const fillMs = performance.now() - t0;
gc();
const after = process.memoryUsage();
const pauses: number[] = [];
for (let k = 0; k < 5; k += 1) {
  const t = performance.now();
  gc();
  pauses.push(performance.now() - t);
}
pauses.sort((a, b) => a - b);
console.log(JSON.stringify({
  mode,
  events: N,
  heap_bytes_per_event: Math.round((after.heapUsed - before.heapUsed) / N),
  offheap_bytes_per_event: Math.round((after.arrayBuffers - before.arrayBuffers) / N),
  full_gc_ms: Math.round(pauses[2]! * 10) / 10,
  fill_us_per_event: Math.round((fillMs * 1000) / N * 100) / 100,
  held: typeof held,
}));
