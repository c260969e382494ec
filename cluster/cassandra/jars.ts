/**
 * Apache Cassandra's jars, from Maven Central, cached once per version in
 * `.cache/cassandra/<version>/lib` (git-ignored) and reused while present and complete.
 *
 * `org.apache.cassandra:cassandra-all` is published with every runtime dependency, so
 * `mvn dependency:copy-dependencies` on a one-dependency pom (cluster/cassandra/pom.xml) gives the
 * whole server: no tarball, no download site, no Docker. Maven keeps its own copy in ~/.m2 too,
 * so a lost cache is rebuilt without the network.
 *
 * Complete means: the `.complete` manifest written last lists every jar with its size, and each
 * is there with that size. A fetch goes to a temporary directory renamed into place at the end,
 * so an interrupted fetch or two fetches at once (test files in parallel) never leave a half
 * directory that looks complete.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

export const CASSANDRA_VERSION = '5.0.6';
const ROOT = path.resolve(import.meta.dirname, '../..');
const POM = path.join(import.meta.dirname, 'pom.xml');
const MANIFEST = '.complete';
/** jamm measures object sizes for memtables; Cassandra requires it as a -javaagent. */
const JAMM = /^jamm-[\d.]+\.jar$/;

export interface CassandraJars {
  version: string;
  /** The directory of jars: the classpath is `<lib>/*`. */
  lib: string;
  /** jamm's jar, for -javaagent. */
  jamm: string;
}

/** CASSANDRA_CACHE_DIR moves the cache (a CI cache volume); default `<checkout>/.cache/cassandra`. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.CASSANDRA_CACHE_DIR ?? path.join(ROOT, '.cache', 'cassandra'));
}

export function libDir(version = CASSANDRA_VERSION, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheRoot(env), version, 'lib');
}

/** The cached jars if the cache is complete, else null. */
export function cachedJars(version = CASSANDRA_VERSION, env: NodeJS.ProcessEnv = process.env): CassandraJars | null {
  const lib = libDir(version, env);
  let manifest: string;
  try {
    manifest = fs.readFileSync(path.join(lib, MANIFEST), 'utf8');
  } catch {
    return null;
  }
  const entries = manifest.split('\n').filter(Boolean).map((line) => line.split('\t') as [string, string]);
  if (entries.length === 0) return null;
  for (const [name, size] of entries) {
    try {
      if (fs.statSync(path.join(lib, name)).size !== Number(size)) return null;
    } catch {
      return null;
    }
  }
  const jamm = entries.map(([name]) => name).find((n) => JAMM.test(n));
  if (!jamm || !entries.some(([name]) => name === `cassandra-all-${version}.jar`)) return null;
  return { version, lib, jamm: path.join(lib, jamm) };
}

/**
 * The jars, fetched with Maven when the cache is missing or incomplete (about a minute and 66 MB
 * for 5.0.6 on a fresh ~/.m2). `mvn` must be on the PATH then.
 */
export async function ensureJars(log: (line: string) => void = () => {}, version = CASSANDRA_VERSION, env: NodeJS.ProcessEnv = process.env): Promise<CassandraJars> {
  const cached = cachedJars(version, env);
  if (cached) return cached;
  const lib = libDir(version, env);
  fs.mkdirSync(path.dirname(lib), { recursive: true });
  const tmp = `${lib}.tmp-${process.pid}-${Date.now()}`;
  log(`fetching Apache Cassandra ${version} and its dependencies from Maven Central into ${lib}`);
  const started = Date.now();
  try {
    await promisify(execFile)(
      'mvn',
      ['-q', '-B', '-f', POM, `-Dcassandra.version=${version}`, 'dependency:copy-dependencies', `-DoutputDirectory=${tmp}`, '-DincludeScope=runtime'],
      { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024 },
    );
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    const e = err as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    if (e.code === 'ENOENT') throw new Error('mvn is not installed: Maven fetches Cassandra\'s jars once (apt-get install -y maven)');
    throw new Error(`mvn could not fetch cassandra-all ${version}: ${(e.stdout ?? '').trim()} ${(e.stderr ?? e.message).trim()}`.trim());
  }
  const jars = fs.readdirSync(tmp).filter((f) => f.endsWith('.jar')).sort();
  fs.writeFileSync(path.join(tmp, MANIFEST), jars.map((j) => `${j}\t${fs.statSync(path.join(tmp, j)).size}\n`).join(''));
  // Into place in one rename. Another process may have finished first: keep its copy (a JVM
  // may already run from it); only an incomplete leftover is replaced.
  if (!cachedJars(version, env)) fs.rmSync(lib, { recursive: true, force: true });
  try {
    fs.renameSync(tmp, lib);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!cachedJars(version, env)) throw err;
  }
  const done = cachedJars(version, env);
  if (!done) throw new Error(`the jars fetched into ${lib} are incomplete (no cassandra-all-${version}.jar or jamm)`);
  log(`fetched ${jars.length} jars in ${Math.round((Date.now() - started) / 1000)} s`);
  return done;
}
