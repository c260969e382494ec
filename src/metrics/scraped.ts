/**
 * A counter whose value is read from the code's own tally when scraped: the hot path increments
 * a plain number and pays nothing for the metric.
 */
import { Counter, type Registry } from 'prom-client';

export function scrapedCounter(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}
