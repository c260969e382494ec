/**
 * The development IdP as its own process (`npm run idp`): what a chat node in `CHAT_IDP=http`
 * mode talks to, exactly as it would talk to a team's real IdP adapter.
 *
 * Environment (each checked; the process refuses to start with one line per problem):
 *   IDP_HOST       listen address                       default 127.0.0.1
 *   IDP_PORT       listen port, 0 = any free port       default 8081
 *   IDP_FIXTURE    fixture file                         default src/idp/demo-fixture.json
 *   IDP_ISSUER     the `iss` of tokens and base URL of the discovery document: the IdP's URL as
 *                  its clients reach it (behind a load balancer: the balancer's URL)
 *                                                       default http://IDP_HOST:<port><base path>
 *   IDP_BASE_PATH  the path every endpoint is served under, `` or `/something`
 *                                                       default the path of IDP_ISSUER (``)
 *   IDP_DEV_LOGIN  enable POST /dev/login and /dev/rotate-keys   default true
 *   IDP_DATA_DIR   where the signing keys are kept across restarts  default ./data/idp
 *
 * Once listening it prints one JSON line to stdout:
 *   {"msg":"idp listening","port":8081,"issuer":"http://127.0.0.1:8081"}
 */
import path from 'node:path';
import uWS from '@trufflesuite/uws-js-unofficial';
import { DEFAULT_FIXTURE } from '../config/index.ts';
import { DevIdp } from './dev-idp.ts';
import { loadFixture, type Fixture } from './fixture.ts';
import { KEY_FILE_NAME } from './key-file.ts';
import { createIdpHandler, mountIdp } from './http.ts';

interface IdpEnv {
  host: string;
  port: number;
  fixturePath: string;
  issuer: string | null;
  basePath: string;
  devLogin: boolean;
  dataDir: string;
}

function readIdpEnv(env: Record<string, string | undefined>): { config: IdpEnv; problems: string[] } {
  const problems: string[] = [];
  const value = (name: string): string | undefined => (env[name] === '' ? undefined : env[name]);

  const host = value('IDP_HOST') ?? '127.0.0.1';
  const rawPort = value('IDP_PORT') ?? '8081';
  const port = Number(rawPort);
  if (!/^\d{1,5}$/.test(rawPort) || port > 65535) problems.push(`IDP_PORT must be an integer from 0 to 65535 (got "${rawPort}")`);

  let issuer = value('IDP_ISSUER') ?? null;
  if (issuer !== null) {
    try {
      const u = new URL(issuer);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      if (u.search !== '' || u.hash !== '') throw new Error('query');
      issuer = issuer.replace(/\/+$/, '');
    } catch {
      problems.push(`IDP_ISSUER must be an absolute http(s) URL without query or fragment (got "${issuer}")`);
    }
  }

  const rawDev = (value('IDP_DEV_LOGIN') ?? 'true').toLowerCase();
  let devLogin = true;
  if (['0', 'false', 'off', 'no'].includes(rawDev)) devLogin = false;
  else if (!['1', 'true', 'on', 'yes'].includes(rawDev)) problems.push(`IDP_DEV_LOGIN must be true or false (got "${rawDev}")`);

  // Served where the issuer says by default, so a balancer can route the issuer's path to the IdP
  // as it is (npm run cluster routes /idp/).
  const basePath = (value('IDP_BASE_PATH') ?? (issuer !== null && URL.canParse(issuer) ? new URL(issuer).pathname : '')).replace(/\/+$/, '');
  if (basePath !== '' && !/^\/[A-Za-z0-9._~\/-]*$/.test(basePath)) problems.push(`IDP_BASE_PATH must be empty or a path such as /idp (got "${basePath}")`);

  const dataDir = path.resolve(value('IDP_DATA_DIR') ?? 'data/idp');
  return { config: { host, port, fixturePath: path.resolve(value('IDP_FIXTURE') ?? DEFAULT_FIXTURE), issuer, basePath, devLogin, dataDir }, problems };
}

function log(stream: NodeJS.WriteStream, fields: Record<string, unknown>): void {
  stream.write(`${JSON.stringify(fields)}\n`);
}

async function main(): Promise<void> {
  const { config, problems } = readIdpEnv(process.env);
  if (problems.length > 0) {
    process.stderr.write(`invalid configuration:\n  - ${problems.join('\n  - ')}\n`);
    process.exit(1);
  }
  let fixture: Fixture;
  try {
    fixture = await loadFixture(config.fixturePath);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }

  const urlHost = config.host.includes(':') ? `[${config.host}]` : config.host;
  // With IDP_PORT=0 the port, and so the default issuer, is known only once listening.
  let idp: DevIdp;
  try {
    idp = new DevIdp(fixture, { issuer: config.issuer ?? `http://${urlHost}:${config.port}${config.basePath}`, devLogin: config.devLogin, keyFile: path.join(config.dataDir, KEY_FILE_NAME) });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
  const app = uWS.App();
  mountIdp(
    app,
    config.basePath,
    createIdpHandler(idp, {
      onError: (err, req) => log(process.stderr, { level: 'error', msg: 'idp request failed', method: req.method, path: req.path, err: String(err) }),
    }),
  );

  if (config.basePath !== '') {
    app.any('/*', (res, req) => {
      const url = req.getUrl();
      res.writeStatus('404 Not Found').writeHeader('Content-Type', 'application/json; charset=utf-8').writeHeader('Cache-Control', 'no-store');
      res.end(JSON.stringify({ error: 'not_found', error_description: `no such endpoint: ${url}; this identity provider serves under ${config.basePath}/` }));
    });
  }

  app.listen(config.host, config.port, (socket) => {
    if (socket === false) {
      process.stderr.write(`cannot listen on ${config.host}:${config.port}\n`);
      process.exit(1);
    }
    const port = uWS.us_socket_local_port(socket);
    if (config.issuer === null) idp.setIssuer(`http://${urlHost}:${port}${config.basePath}`);
    log(process.stdout, { msg: 'idp listening', port, issuer: idp.issuer(), base_path: config.basePath, dev_login: config.devLogin, fixture: config.fixturePath, data_dir: config.dataDir });

    const stop = (signal: string): void => {
      uWS.us_listen_socket_close(socket);
      log(process.stdout, { msg: 'idp stopped', signal });
      // Idle keep-alive connections would keep the loop alive; nothing else needs draining.
      process.exit(0);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}

await main();
