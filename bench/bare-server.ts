/**
 * The baseline for edge benchmarks: a bare uWebSockets.js server that answers every GET and POST
 * (whatever the path) with one fixed JSON body, doing nothing else. The chat node's edge is
 * measured against it, so both run on the same machine under the same load generator.
 *
 * Env: BARE_PORT (0 = any free port), BARE_HOST (default 127.0.0.1), BARE_BODY (the exact JSON
 * text to answer, default {"ok":true}). First stdout line: {"port":N}.
 */
import uWS from '@trufflesuite/uws-js-unofficial';

const host = process.env.BARE_HOST || '127.0.0.1';
const port = Number(process.env.BARE_PORT || '0');
const body = Buffer.from(process.env.BARE_BODY ?? '{"ok":true}', 'utf8');

function answer(res: uWS.HttpResponse): void {
  res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(body);
}

const app = uWS.App()
  .get('/*', (res) => answer(res))
  .post('/*', (res) => {
    // A POST is answered once its whole body has arrived, as a real handler would have to.
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    res.onData((_chunk, isLast) => {
      if (isLast && !aborted) res.cork(() => answer(res));
    });
  })
  .any('/*', (res) => {
    res.writeStatus('405 Method Not Allowed').end();
  });

app.listen(host, port, (socket) => {
  if (socket === false) {
    process.stderr.write(`bare-server: cannot listen on ${host}:${port}\n`);
    process.exit(1);
  }
  process.stdout.write(`${JSON.stringify({ port: uWS.us_socket_local_port(socket) })}\n`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
