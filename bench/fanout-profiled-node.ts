/**
 * The chat node bundle under the V8 CPU profiler, for `BENCH_FANOUT_CPU_PROFILE=<dir>` (the
 * `--cpu-prof` flag is refused in NODE_OPTIONS, and startTsx passes no node flags). The profile is
 * written to `<dir>/node-<pid>.cpuprofile` when the node exits (the bench stops it with SIGTERM);
 * open it in Chrome DevTools or speedscope.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

const dir = process.env.BENCH_FANOUT_CPU_PROFILE;
if (!dir) throw new Error('BENCH_FANOUT_CPU_PROFILE is not set');
const session = new Session();
session.connect();
session.post('Profiler.setSamplingInterval', { interval: 200 });
session.post('Profiler.enable', () => session.post('Profiler.start'));
process.on('exit', () => {
  // The in-process inspector answers synchronously, so this completes inside 'exit'.
  session.post('Profiler.stop', (err, result) => {
    if (!err) writeFileSync(path.join(dir, `node-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
  });
});
await import(path.resolve(import.meta.dirname, '../dist/main.mjs'));
