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

let node;
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
// The store's writer thread ended: no write can succeed, so exit for the supervisor to restart us.
void node.failed.then(() => {
  if (stopping) return;
  stopping = true;
  node.log.flush(() => process.exit(1));
});
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    node.log.info({ signal: sig }, 'shutting down');
    // Exit only once the logger has flushed, so the last lines (the stop itself) are not lost.
    const exit = (code: number) => node.log.flush(() => process.exit(code));
    node.close().then(
      () => exit(0),
      (err: unknown) => {
        node.log.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  });
}
