/**
 * Benchmark runner: `npm run bench -- <scenario...>` (tsx bench/run.ts <scenario...>).
 *
 * Progress goes to stderr; stdout gets a table per scenario and, last, one JSON line with every
 * figure, for scripts and for comparing runs (when one scenario ran, its figures are also top-level
 * keys of that line). Flags after a scenario's name (`groupchat --cluster 3`) are that scenario's. Exit code: 0 when every scenario produced figures
 * (goals missed are reported, and fail the run only with BENCH_STRICT=1), 1 when one failed,
 * 2 for a usage error.
 *
 * Settings (environment): BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_WARMUP_SECONDS, BENCH_ROUNDS;
 * BENCH_VERBOSE=1 echoes the children's output.
 */
import os from 'node:os';
import { BenchError } from './lib/errors.ts';
import { cpuPinning, stopAll } from './lib/processes.ts';
import { formatScenario } from './lib/report.ts';
import { settingsFromEnv, type BenchSettings, type Goal, type Scenario } from './lib/scenario.ts';

/** Adding a scenario is one line here and one module exporting `scenario`. */
const SCENARIOS: Record<string, () => Promise<Scenario>> = {
  edge: async () => (await import('./edge.ts')).scenario,
  messages: async () => (await import('./messages.ts')).scenario,
  fanout: async () => (await import('./fanout.ts')).scenario,
  'bus-window': async () => (await import('./bus-window.ts')).scenario,
  floor: async () => (await import('./floor.ts')).scenario,
  cluster: async () => (await import('./cluster.ts')).scenario,
  'cassandra-sends': async () => (await import('./cassandra-sends.ts')).scenario,
  'cassandra-retention': async () => (await import('./cassandra-retention.ts')).scenario,
  'redis-cluster': async () => (await import('./redis-cluster.ts')).scenario,
  web: async () => (await import('./web-app.ts')).scenario,
  bare: async () => (await import('./lib/self-check.ts')).scenario,
  groupchat: async () => (await import('./groupchat.ts')).scenario,
  'bus-fan': async () => (await import('./bus-fan.ts')).scenario,
};

interface Outcome {
  figures?: Record<string, number>;
  goals?: Goal[];
  error?: string;
}

const log = (line: string): void => {
  process.stderr.write(`bench: ${line}\n`);
};

function usage(): string {
  return `usage: npm run bench -- <scenario [--flag value...]>...\nscenarios: ${Object.keys(SCENARIOS).join(', ')}`;
}

/** `a --x 1 b` -> [a, [--x, 1]], [b, []]: flags belong to the scenario named before them. */
function splitArgs(argv: string[]): { names: string[]; args: Map<string, string[]>; stray: string[] } {
  const names: string[] = [];
  const args = new Map<string, string[]>();
  const stray: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const current = names[names.length - 1];
    if (a.startsWith('--')) {
      if (current === undefined) stray.push(a);
      else args.get(current)!.push(a);
      // A flag's value, if it has one, is the next word that is not a flag and not a scenario.
      const value = argv[i + 1];
      if (value !== undefined && !value.startsWith('--') && !(value in SCENARIOS) && current !== undefined) {
        args.get(current)!.push(value);
        i++;
      }
    } else {
      names.push(a);
      args.set(a, []);
    }
  }
  return { names, args, stray };
}

async function main(argv: string[]): Promise<number> {
  const { names, args, stray } = splitArgs(argv);
  if (stray.length > 0) {
    process.stderr.write(`flags before any scenario: ${stray.join(' ')}\n${usage()}\n`);
    return 2;
  }
  const unknown = names.filter((n) => !(n in SCENARIOS));
  if (names.length === 0 || unknown.length > 0) {
    if (unknown.length) process.stderr.write(`unknown scenario: ${unknown.join(', ')}\n`);
    process.stderr.write(`${usage()}\n`);
    return 2;
  }
  let settings: BenchSettings;
  try {
    settings = settingsFromEnv();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }

  const [load1] = os.loadavg();
  if (load1 !== undefined && load1 > 0.5) log(`warning: load average is ${load1.toFixed(2)} before starting; figures will be noisy`);

  const outcomes: Record<string, Outcome> = {};
  let failed = false;
  for (const name of names) {
    const scenario = await SCENARIOS[name]!();
    const scenarioArgs = args.get(name) ?? [];
    if (scenarioArgs.length > 0 && scenario.usage === undefined) {
      process.stderr.write(`${name} takes no flags (got ${scenarioArgs.join(' ')})\n`);
      return 2;
    }
    log(`${name}: ${scenario.description}`);
    try {
      const result = await scenario.run(settings, (line) => log(`${name}: ${line}`), scenarioArgs);
      outcomes[name] = { figures: result.figures, goals: result.goals };
      process.stdout.write(`${formatScenario(name, result)}\n\n`);
    } catch (err) {
      failed = true;
      const message = err instanceof BenchError ? err.message : String((err as Error).stack ?? err);
      outcomes[name] = { error: message.split('\n')[0] };
      process.stdout.write(`== ${name}\nFAILED: ${message}\n\n`);
    } finally {
      await stopAll();
    }
  }

  const only = names.length === 1 ? outcomes[names[0]!]?.figures : undefined;
  const summary = {
    bench: {
      at: new Date().toISOString(),
      machine: { cpus: os.availableParallelism(), node: process.version, platform: `${process.platform}-${process.arch}`, loadavg1_before: load1, cpu_pinning: cpuPinning() },
      settings,
      scenarios: outcomes,
    },
    ...(only ?? {}),
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  const missed = Object.values(outcomes).some((o) => o.goals?.some((g) => !g.pass));
  if (failed) return 1;
  return missed && process.env.BENCH_STRICT === '1' ? 3 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  async (err: unknown) => {
    process.stderr.write(`${String((err as Error).stack ?? err)}\n`);
    await stopAll();
    process.exit(1);
  },
);
