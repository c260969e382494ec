/**
 * Raises the header-section limit of the uWebSockets.js binary this project runs, from 4 KB to
 * 32 KB. Run by `npm install` / `npm ci` (package.json `postinstall`); safe to run again.
 *
 * Why: uWebSockets parses a request in place when its whole header section arrives in one read;
 * when it arrives in pieces, it copies the pieces into a per-connection buffer of at most
 * `HttpParser::MAX_FALLBACK_SIZE` bytes (4 KB, compiled in; the build we can run,
 * @trufflesuite/uws-js-unofficial 20.30.0, predates the UWS_HTTP_MAX_HEADERS_SIZE variable), and
 * closes the connection, calling no handler, once that is full. Identity providers' tokens reach
 * 4-8 KB and arrive split, so requests carrying them failed at random.
 *
 * How: MAX_FALLBACK_SIZE is a non-static const member, so its value lives in each connection's
 * parser object and is read from there; the constructor (inlined into the socket-open handler,
 * once for TCP and once for TLS) stores it with one instruction, `movq $0x1000, off(%rdi)`. This
 * script changes those two 32-bit immediates to 32768, in a binary it recognises by its SHA-256
 * (the patch sites are checked again before writing), and refuses any other file. Nothing else
 * changes: the buffer grows as needed up to the new limit (a std::string), and each read of a
 * split header section re-parses what is buffered, so the limit also bounds that work.
 *
 * Other platforms or versions keep their 4 KB limit: the node logs the limit it runs with
 * (`header_section_limit` in its "listening" line; null when unknown). docs/http.md has the
 * limits of a bare node and of the load balancer.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** The limit of the unpatched library and the one this script sets. */
export const ORIGINAL_LIMIT = 4096;
export const PATCHED_LIMIT = 32768;

/**
 * Known binaries: the SHA-256 of the file as published, and the file offsets of the 32-bit
 * immediates (each one preceded by the instruction's `48 c7 87 <disp32>` bytes).
 */
export const KNOWN_BUILDS = {
  'uws_linux_x64_115.node': {
    sha256: 'f158fb441f7e2e37b3ab9a56782fe37f4c0d33b5cd32e96ee5c0120ce7db7ced',
    sites: [
      { opcode: '48c78790000000', immediate: 0xe98de },
      { opcode: '48c78780000000', immediate: 0xf90eb },
    ],
  },
};

/** The uWS binary Node loads on this machine (as the package's loader names it). */
export function binaryPath() {
  const require = createRequire(import.meta.url);
  const pkg = path.dirname(require.resolve('@trufflesuite/uws-js-unofficial/package.json'));
  return path.join(pkg, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
}

function readLimitAt(data, site) {
  const op = data.subarray(site.immediate - 7, site.immediate).toString('hex');
  return op === site.opcode ? data.readUInt32LE(site.immediate) : null;
}

/**
 * The header-section limit of `file`: 4096, 32768, or null when the file is not a known build (or
 * not as published except at the patch sites).
 * @param {string} [file]
 * @returns {number | null}
 */
export function headerSectionLimit(file = binaryPath()) {
  const build = KNOWN_BUILDS[path.basename(file)];
  if (!build) return null;
  let data;
  try {
    data = readFileSync(file);
  } catch {
    return null;
  }
  const limits = build.sites.map((s) => readLimitAt(data, s));
  if (limits.some((l) => l === null) || new Set(limits).size !== 1) return null;
  // The rest of the file must be the published build: hash it with the original immediates.
  const original = Buffer.from(data);
  for (const s of build.sites) original.writeUInt32LE(ORIGINAL_LIMIT, s.immediate);
  if (createHash('sha256').update(original).digest('hex') !== build.sha256) return null;
  return limits[0];
}

/**
 * The limit as the two patch sites say, without hashing the file: for the node's start, after
 * this script (which checks the hash) ran at install. Null when the sites do not look as expected.
 * @param {string} [file]
 * @returns {number | null}
 */
export function headerSectionLimitAtSites(file = binaryPath()) {
  const build = KNOWN_BUILDS[path.basename(file)];
  if (!build) return null;
  let fd;
  try {
    fd = openSync(file, 'r');
    const limits = build.sites.map((s) => {
      const bytes = Buffer.alloc(11);
      readSync(fd, bytes, 0, 11, s.immediate - 7);
      return bytes.subarray(0, 7).toString('hex') === s.opcode ? bytes.readUInt32LE(7) : null;
    });
    return limits.some((l) => l === null) || new Set(limits).size !== 1 ? null : limits[0];
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Sets the limit of `file` to PATCHED_LIMIT. Returns what it found: 'patched' (done now),
 * 'already' (nothing to do) or 'unknown' (not a build this script knows: left alone).
 * @param {string} [file]
 * @returns {'patched' | 'already' | 'unknown'}
 */
export function patch(file = binaryPath()) {
  const limit = headerSectionLimit(file);
  if (limit === PATCHED_LIMIT) return 'already';
  if (limit !== ORIGINAL_LIMIT) return 'unknown';
  const data = readFileSync(file);
  for (const s of KNOWN_BUILDS[path.basename(file)].sites) data.writeUInt32LE(PATCHED_LIMIT, s.immediate);
  // Write beside and rename: a process loading the library never sees a half-written file.
  const tmp = `${file}.patching-${process.pid}`;
  writeFileSync(tmp, data, { mode: 0o644 });
  renameSync(tmp, file);
  return headerSectionLimit(file) === PATCHED_LIMIT ? 'patched' : 'unknown';
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  let file;
  try {
    file = binaryPath();
  } catch (err) {
    console.log(`uws-header-limit: uWebSockets.js is not installed (${err.message}); nothing to do`);
    process.exit(0);
  }
  const outcome = patch(file);
  const messages = {
    patched: `uws-header-limit: ${path.basename(file)}: header sections up to ${PATCHED_LIMIT} bytes in any number of reads (was ${ORIGINAL_LIMIT})`,
    already: `uws-header-limit: ${path.basename(file)}: already ${PATCHED_LIMIT} bytes`,
    unknown: `uws-header-limit: ${path.basename(file)} is not a build this script knows; its header-section limit stays as built (4 KB in pieces); see docs/http.md`,
  };
  console.log(messages[outcome]);
}
