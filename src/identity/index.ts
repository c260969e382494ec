/**
 * Chooses the identity directory driver from configuration. The embedded driver also mounts the
 * development IdP's HTTP endpoints at `/idp` on the node's own port, so tokens can be obtained
 * from a freshly started node with nothing else running.
 */
import type { TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import { API_PREFIX, type Config } from '../config/index.ts';
import { DevIdp } from '../idp/dev-idp.ts';
import { loadFixture } from '../idp/fixture.ts';
import { createIdpHandler, mountIdp } from '../idp/http.ts';
import type { Logger } from '../log/index.ts';
import { EmbeddedIdentityDirectory } from './embedded-identity-directory.ts';
import { HttpIdentityDirectory } from './http-identity-directory.ts';
import type { IdentityDirectory } from './types.ts';

export const EMBEDDED_IDP_PREFIX = '/idp';

export async function createIdentityDirectory(
  config: Config,
  log: Logger,
): Promise<{ directory: IdentityDirectory; mount?: (app: TemplatedApp) => void }> {
  const idp = config.idp;
  switch (idp.driver) {
    case 'embedded': {
      const origin = config.publicBaseUrl.slice(0, -API_PREFIX.length);
      const dev = new DevIdp(await loadFixture(idp.fixturePath), { issuer: `${origin}${EMBEDDED_IDP_PREFIX}`, devLogin: idp.devLogin });
      log.info({ issuer: `${origin}${EMBEDDED_IDP_PREFIX}`, fixture: idp.fixturePath }, 'embedded development identity provider');
      return {
        directory: new EmbeddedIdentityDirectory(dev),
        mount: (app) => mountIdp(app, EMBEDDED_IDP_PREFIX, createIdpHandler(dev)),
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
      return { directory };
    }
  }
}
