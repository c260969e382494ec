/**
 * The `bus-window` scenario: what the in-process bus's resume window costs the JS heap and the
 * garbage collector. In two fresh processes (node --expose-gc), BUS_WINDOW_EVENTS (100,000) chat
 * events are held either in the window (LocalStreams: the events' JSON in one off-heap byte
 * ring, entries as numbers) or as the plain objects the window held before; reported: heap and off-heap
 * bytes per held event, the median pause of a full GC with everything held, and the cost of
 * publishing one event. No goal: the figures size CHAT's bus window (docs/bus.md) and explain
 * the node's major-GC pauses (docs/benchmarks.md).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { BenchError } from './lib/errors.ts';
import { REPO_ROOT } from './lib/processes.ts';
import type { Scenario } from './lib/scenario.ts';

interface ProcResult {
  mode: string;
  events: number;
  heap_bytes_per_event: number;
  offheap_bytes_per_event: number;
  full_gc_ms: number;
  fill_us_per_event: number;
}

function measure(mode: 'window' | 'objects'): ProcResult {
  const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', path.join(REPO_ROOT, 'bench/bus-window-proc.ts'), mode], { cwd: REPO_ROOT, encoding: 'utf8' });
  const line = out.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as ProcResult;
  } catch {
    throw new BenchError(`bus-window: the ${mode} process printed no result:\n${out.slice(0, 2000)}`);
  }
}

export const scenario: Scenario = {
  name: 'bus-window',
  description: 'heap, off-heap bytes and full-GC pause of 100,000 events held in the in-process bus window vs held as plain objects (no goal)',
  async run(_settings, log) {
    log('holding the events as plain objects');
    const objects = measure('objects');
    log('holding the events in the bus window');
    const window = measure('window');
    const round1 = (n: number): number => Math.round(n * 10) / 10;
    return {
      measurements: [],
      figures: {
        events: window.events,
        window_heap_bytes_per_event: window.heap_bytes_per_event,
        window_offheap_bytes_per_event: window.offheap_bytes_per_event,
        window_full_gc_ms: window.full_gc_ms,
        window_publish_us: window.fill_us_per_event,
        objects_heap_bytes_per_event: objects.heap_bytes_per_event,
        objects_full_gc_ms: objects.full_gc_ms,
        heap_ratio: round1(objects.heap_bytes_per_event / Math.max(1, window.heap_bytes_per_event)),
        full_gc_ratio: round1(objects.full_gc_ms / Math.max(0.1, window.full_gc_ms)),
      },
      goals: [],
      notes: [
        'window_*: held in LocalStreams (100 channels), the JSON in one off-heap byte ring; objects_*: the same events held as objects in an array',
        'full_gc_ms: median of 5 forced full GCs with everything held; window_publish_us: publish cost per event (JSON + Buffer + entry), building the event included',
      ],
    };
  },
};
