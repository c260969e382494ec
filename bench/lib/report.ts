/** Human-readable output: one table per scenario, its figures, and its goals. */
import type { ScenarioResult } from './scenario.ts';

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const ms = (n: number): string => n.toFixed(2);

export function formatScenario(name: string, result: ScenarioResult): string {
  const rows = result.measurements.map((m) => [
    m.target,
    String(m.round),
    Math.round(m.wrk.requestsPerSecond).toLocaleString('en-US'),
    ms(m.wrk.latencyMs.p50),
    ms(m.wrk.latencyMs.p90),
    ms(m.wrk.latencyMs.p99),
    m.wrk.requests.toLocaleString('en-US'),
  ]);
  const out = [`== ${name}`, table(['target', 'round', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'requests'], rows), ''];
  for (const [figure, value] of Object.entries(result.figures)) out.push(`${figure.padEnd(14)} ${value}`);
  for (const g of result.goals) out.push(`goal: ${g.figure} ${g.op} ${g.threshold}: ${g.value} ${g.pass ? 'PASS' : 'MISS'}`);
  for (const note of result.notes ?? []) out.push(`note: ${note}`);
  return out.join('\n');
}
