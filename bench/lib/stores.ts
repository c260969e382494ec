/**
 * The store flag of the scenarios that run their loads against one store or several in the same
 * run (`messages`, `cluster`): `--stores sqlite,cassandra`, or `--store cassandra` for one.
 *
 * With the default (SQLite alone) a scenario's figures keep their historical names, so older JSON
 * lines stay comparable; with any other choice every figure and table row carries its store
 * (`cassandra_send_rps`, `cassandra: send`), so the stores of one run sit side by side.
 */
import { BenchError } from './errors.ts';
import type { Goal, Measurement, ScenarioResult } from './scenario.ts';

export type StoreKind = 'sqlite' | 'cassandra';

const KINDS: readonly StoreKind[] = ['sqlite', 'cassandra'];

export const STORES_USAGE = '[--stores sqlite,cassandra | --store sqlite|cassandra] (default sqlite; Cassandra: a node of the bench\'s own, see bench/lib/cassandra.ts)';

/** The stores asked for, in the order given (SQLite first by convention: it needs no JVM running beside it). */
export function parseStores(scenario: string, args: string[]): StoreKind[] {
  let stores: StoreKind[] = ['sqlite'];
  for (let i = 0; i < args.length; i += 1) {
    const flag = args[i]!;
    const value = args[i + 1]?.startsWith('--') ? undefined : args[i + 1];
    if (flag !== '--stores' && flag !== '--store') throw new BenchError(`${scenario}: unknown flag ${flag}\nflags: ${STORES_USAGE}`);
    const names = (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    const bad = names.filter((n) => !KINDS.includes(n as StoreKind));
    if (names.length === 0 || bad.length > 0 || (flag === '--store' && names.length !== 1) || new Set(names).size !== names.length) {
      throw new BenchError(`${scenario}: ${flag} takes ${flag === '--store' ? 'one of' : 'a comma-separated list of'} ${KINDS.join(', ')} (got ${value ?? 'nothing'})`);
    }
    stores = names as StoreKind[];
    i += 1;
  }
  return stores;
}

/** Whether figures and rows carry their store's name: any run but the historical SQLite-only one. */
export const labelled = (stores: readonly StoreKind[]): boolean => !(stores.length === 1 && stores[0] === 'sqlite');

/** One store's results under its name (`cassandra_send_rps`, `cassandra: send`), or as they are. */
export function underStore<T extends { measurements: Measurement[]; figures: Record<string, number>; goals: Goal[]; notes?: string[] }>(store: StoreKind, stores: readonly StoreKind[], r: T): T {
  if (!labelled(stores)) return r;
  const figures = Object.fromEntries(Object.entries(r.figures).map(([k, v]) => [`${store}_${k}`, v]));
  return {
    ...r,
    figures,
    measurements: r.measurements.map((m) => ({ ...m, target: `${store}: ${m.target}` })),
    goals: r.goals.map((g) => ({ ...g, figure: `${store}_${g.figure}` })),
    notes: (r.notes ?? []).map((n) => `${store}: ${n}`),
  };
}

/** The stores' results side by side: one table, one set of figures. */
export function mergeResults(results: ScenarioResult[]): ScenarioResult {
  return {
    measurements: results.flatMap((r) => r.measurements),
    figures: Object.assign({}, ...results.map((r) => r.figures)) as Record<string, number>,
    goals: results.flatMap((r) => r.goals),
    notes: results.flatMap((r) => r.notes ?? []),
  };
}
