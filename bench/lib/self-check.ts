/**
 * The `bare` scenario: the harness measured against itself. Two identical bare servers under the
 * same settings should come out even (ratio near 1); if they do not, the machine is too noisy
 * (or the harness unfair) for the other scenarios' ratios to mean much.
 */
import { startBare, type BareServer } from './bare.ts';
import { compareTargets, pairFigures } from './compare.ts';
import { goal, type Scenario } from './scenario.ts';

const BODY = Buffer.from(JSON.stringify({ self_check: true, padding: 'x'.repeat(200) }));

export const scenario: Scenario = {
  name: 'bare',
  description: 'self-check: bare server against bare server, ratio should be near 1',
  async run(settings, log) {
    const servers: BareServer[] = [];
    try {
      servers.push(await startBare('bare-a', BODY));
      servers.push(await startBare('bare-b', BODY));
      const [a, b] = servers as [BareServer, BareServer];
      const path = '/api/v1/self-check';
      const measurements = await compareTargets(
        [
          { name: 'bare_a', url: a.baseUrl + path, headers: { Authorization: 'Bearer self-check' } },
          { name: 'bare_b', url: b.baseUrl + path, headers: { Authorization: 'Bearer self-check' } },
        ],
        settings,
        log,
      );
      const figures = pairFigures(measurements, 'bare_a', 'bare_b');
      return { measurements, figures, goals: [goal('ratio', figures.ratio!, '>=', 0.85), goal('ratio', figures.ratio!, '<=', 1.15)] };
    } finally {
      await Promise.all(servers.map((s) => s.process.stop()));
    }
  },
};
