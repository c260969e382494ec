/**
 * What a benchmark scenario is to bench/run.ts: a name, a one-line description, and a run that
 * returns its measurements, headline figures and goals. Settings come from the environment.
 */
import { envReader } from '../../src/config/env-reader.ts';
import { BenchError } from './errors.ts';
import type { WrkResult } from './wrk.ts';

export interface BenchSettings {
  /** Measured seconds per target per round (BENCH_SECONDS, default 10). */
  seconds: number;
  /** Concurrent connections (BENCH_CONNECTIONS, default 50). */
  connections: number;
  /** Unmeasured load per target before the first round (BENCH_WARMUP_SECONDS, default 3). */
  warmupSeconds: number;
  /** Rounds; each round measures every target once, order alternating (BENCH_ROUNDS, default 1). */
  rounds: number;
}

export interface Measurement {
  target: string;
  round: number;
  wrk: WrkResult;
  /** CPU seconds (user + system) the serving process used during the round, when its pid is known. */
  cpuSeconds?: number;
}

export interface Goal {
  figure: string;
  op: '>=' | '<=';
  threshold: number;
  value: number;
  pass: boolean;
}

export interface ScenarioResult {
  measurements: Measurement[];
  /** Headline numbers, flat, for the JSON line (rps, ms, ratios). */
  figures: Record<string, number>;
  goals: Goal[];
  notes?: string[];
}

export interface Scenario {
  name: string;
  description: string;
  /** The flags the scenario takes after its name (`npm run bench -- name --flag value`); none when absent. */
  usage?: string;
  run(settings: BenchSettings, log: (line: string) => void, args: string[]): Promise<ScenarioResult>;
}

export function goal(figure: string, value: number, op: Goal['op'], threshold: number): Goal {
  return { figure, op, threshold, value, pass: op === '>=' ? value >= threshold : value <= threshold };
}

export function settingsFromEnv(env: Record<string, string | undefined> = process.env): BenchSettings {
  const problems: string[] = [];
  const { int } = envReader(env, problems);
  const settings = {
    seconds: int('BENCH_SECONDS', 10, 1, 120),
    connections: int('BENCH_CONNECTIONS', 50, 1, 10_000),
    warmupSeconds: int('BENCH_WARMUP_SECONDS', 3, 0, 60),
    rounds: int('BENCH_ROUNDS', 1, 1, 10),
  };
  if (problems.length) throw new BenchError(problems.join('\n'));
  return settings;
}
