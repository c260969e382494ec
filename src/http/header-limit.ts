/**
 * The header-section limit of the uWebSockets.js binary this node runs: 32 KB once
 * scripts/uws-header-limit.mjs has patched it (npm install runs it), 4 KB as published. A header
 * section arriving in several reads past the limit is closed by uWS without an answer; the node
 * says at start which limit it has (docs/http.md).
 */
import { headerSectionLimitAtSites, PATCHED_LIMIT } from '../../scripts/uws-header-limit.mjs';
import type { Logger } from '../log/index.ts';

export function checkHeaderLimit(log: Logger): number | null {
  let limit: number | null = null;
  try {
    // The sites only (no hash of the 7 MB file at every start): the install step checked it.
    limit = headerSectionLimitAtSites();
  } catch {
    limit = null;
  }
  if (limit !== PATCHED_LIMIT) {
    log.warn(
      { header_section_limit: limit },
      'uWebSockets closes a request whose header section arrives in pieces past 4 KB (tokens of 4-8 KB do): run `node scripts/uws-header-limit.mjs` (npm install does; linux-x64, Node 20 only), or keep a load balancer in front (docs/http.md)',
    );
  }
  return limit;
}
