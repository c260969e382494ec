/** `npm start`: one chat node from environment configuration; SIGTERM/SIGINT stop it gracefully. */
import { ConfigError, loadConfig } from './config/index.ts';
import { startNode } from './node.ts';
import { SchemaTooNewError } from './store/errors.ts';

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`chat node not started: ${err.message}\n`);
    process.exit(2);
  }
  throw err;
}

let node: Awaited<ReturnType<typeof startNode>>;
try {
  node = await startNode(config);
} catch (err) {
  // A store written by a newer release: refusing is the point, so one line, not a stack.
  if (err instanceof SchemaTooNewError) {
    process.stderr.write(`chat node not started: ${err.message}\n`);
    process.exit(2);
  }
  throw err;
}
// For a person at a terminal (the JSON log line says it too): where to point the browser.
process.stderr.write(node.webAppUrl ? `\nChat web app: ${node.webAppUrl}\n\n` : '\nThe web app is not built: npm run build (npm start does it).\n\n');
let stopping = false;
/**
 * Exits once the logger has flushed, so the last lines (the stop itself) are not lost; but never
 * waits on the log for more than 2 s: a log pipe whose reader died (a parent gone, a full pipe)
 * would otherwise hold the exit forever.
 */
function exitAfterFlush(code: number): void {
  setTimeout(() => process.exit(code), 2000).unref();
  node.log.flush(() => process.exit(code));
}
// The store's writer thread ended: no write can succeed, so exit for the supervisor to restart us.
void node.failed.then(() => {
  if (stopping) return;
  stopping = true;
  exitAfterFlush(1);
});
/** Past the grace period, the rest of a stop (drivers closing) gets this long before the exit is forced. */
const STOP_MARGIN_MS = 15_000;
const stopDeadlineMs = config.shutdownGraceMs + STOP_MARGIN_MS;
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.on(sig, () => {
    if (stopping) {
      // A second signal: the operator does not want to wait.
      process.stderr.write(`chat node: ${sig} again, exiting now\n`);
      process.exit(1);
    }
    stopping = true;
    node.log.info({ signal: sig }, 'shutting down');
    // A stop that hangs (a driver waiting on a server that is gone) must not keep the process:
    // an orchestrator would have to kill it, and a test's orphan would run on.
    setTimeout(() => {
      node.log.error({ after_ms: stopDeadlineMs }, 'shutdown did not finish in time; exiting');
      exitAfterFlush(1);
    }, stopDeadlineMs).unref();
    node.close().then(
      () => exitAfterFlush(0),
      (err: unknown) => {
        node.log.error({ err }, 'shutdown failed');
        exitAfterFlush(1);
      },
    );
  });
}
