/**
 * What a node serves outside the API's operations, on the API port: `GET /openapi.json` (the
 * API's description, beside /healthz and /readyz; not an operation of the API itself, so not
 * listed in the document), and the hint of a 404 outside `/api/v1`, which says where things
 * are on this node rather than only where the API is.
 */
import type { TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import { API_PREFIX, type Config } from '../config/index.ts';
import { EMBEDDED_IDP_PREFIX } from '../identity/index.ts';
import { WEB_APP_PATH } from '../web/static-app.ts';

export const OPENAPI_PATH = '/openapi.json';

/** Serves the OpenAPI document (JSON text built once at start), readable from any origin. */
export function serveOpenApi(app: TemplatedApp, documentText: string): void {
  app.get(OPENAPI_PATH, (res) => {
    res.cork(() => {
      res.writeHeader('Content-Type', 'application/json; charset=utf-8');
      // API explorers hosted elsewhere fetch the description cross-origin; it holds nothing secret.
      res.writeHeader('Access-Control-Allow-Origin', '*');
      res.end(documentText);
    });
  });
}

/**
 * The message of a 404 for a path outside the API. (With the embedded IdP, `/idp/...` never gets
 * here: the IdP answers its own 404s.)
 */
export function notFoundAtRoot(config: Config, method: string, url: string): string {
  const idp = config.idp;
  if (idp.driver === 'http' && (url === EMBEDDED_IDP_PREFIX || url.startsWith(`${EMBEDDED_IDP_PREFIX}/`))) {
    return `no route for ${method} ${url}: this node's identity provider runs on its own at ${idp.url} (CHAT_IDP=http); a load balancer in front of the nodes may route ${EMBEDDED_IDP_PREFIX}/ to it (npm run cluster does)`;
  }
  const idpPart = idp.driver === 'embedded' ? `, and the development identity provider under ${EMBEDDED_IDP_PREFIX}/` : '';
  return `no route for ${method} ${url}: this node serves the API under ${API_PREFIX}/ (${config.publicBaseUrl}), ${OPENAPI_PATH}, /healthz and /readyz, the web app under ${WEB_APP_PATH}${idpPart}`;
}
