/**
 * Chooses the identity directory driver from configuration. The embedded driver also mounts the
 * development IdP's HTTP endpoints at `/idp` on the node's own port, so tokens can be obtained
 * from a freshly started node with nothing else running.
 */
import path from 'node:path';
import type { TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import { API_PREFIX, type Config } from '../config/index.ts';
import { DevIdp } from '../idp/dev-idp.ts';
import { loadFixture } from '../idp/fixture.ts';
import { KEY_FILE_NAME } from '../idp/key-file.ts';
import { createIdpHandler, mountIdp, type IdpObserver } from '../idp/http.ts';
import type { Logger } from '../log/index.ts';
import { EmbeddedIdentityDirectory } from './embedded-identity-directory.ts';
import { HttpIdentityDirectory } from './http-identity-directory.ts';
import type { IdentityDirectory } from './types.ts';
import { embeddedTransport, httpTransport } from './oauth-transports.ts';
import type { OAuthTransport } from './web-sign-in.ts';

export const EMBEDDED_IDP_PREFIX = '/idp';

export async function createIdentityDirectory(
  config: Config,
  log: Logger,
): Promise<{ directory: IdentityDirectory; oauth: OAuthTransport; mount?: (app: TemplatedApp, observe?: IdpObserver) => void }> {
  const idp = config.idp;
  switch (idp.driver) {
    case 'embedded': {
      const origin = config.publicBaseUrl.slice(0, -API_PREFIX.length);
      // Its signing key lives in the node's data directory, so tokens survive a restart.
      const dev = new DevIdp(await loadFixture(idp.fixturePath), { issuer: `${origin}${EMBEDDED_IDP_PREFIX}`, devLogin: idp.devLogin, keyFile: path.join(config.dataDir, KEY_FILE_NAME) });
      log.info({ issuer: `${origin}${EMBEDDED_IDP_PREFIX}`, fixture: idp.fixturePath }, 'embedded development identity provider');
      const handler = createIdpHandler(dev);
      return {
        directory: new EmbeddedIdentityDirectory(dev),
        oauth: embeddedTransport(dev, handler),
        mount: (app, observe) => mountIdp(app, EMBEDDED_IDP_PREFIX, handler, observe),
      };
    }
    case 'http': {
      const directory = new HttpIdentityDirectory({ url: idp.url, directoryKey: idp.directoryKey, timeoutMs: idp.timeoutMs });
      try {
        await directory.init();
      } catch (err) {
        // Not fatal: calls answer identity_unavailable until the IdP answers, then all recovers.
        log.warn({ err: (err as Error).message, url: idp.url }, 'identity provider not reachable at start');
      }
      return { directory, oauth: httpTransport(idp.url, idp.timeoutMs) };
    }
  }
}
