/**
 * Which `java` runs Cassandra: Java 17 and nothing else. Cassandra 5.0 supports 11 and 17; on
 * Java 24+ it cannot start at all (it installs a security manager, which those JVMs refuse), and
 * machines here also carry a Temurin 25 under /usr/lib/jvm that a bare `java` or a JAVA_HOME may
 * point at. So the runner looks for a 17 explicitly and checks the version it found.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The major version `java -version` reports (`openjdk version "17.0.15"` → 17), or null. */
export function javaMajor(java: string): number | null {
  // `java -version` writes to stderr.
  const r = spawnSync(java, ['-version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
  return r.error ? null : parseMajor(`${r.stderr}${r.stdout}`);
}

export function parseMajor(versionOutput: string): number | null {
  const m = /version "(\d+)(?:\.(\d+))?/.exec(versionOutput);
  if (!m) return null;
  // Java 8 and older report "1.8.0_...".
  return m[1] === '1' ? Number(m[2]) : Number(m[1]);
}

/** Candidates in order: CASSANDRA_JAVA, Debian's OpenJDK 17, JAVA_HOME, the `java` on PATH. */
function candidates(env: NodeJS.ProcessEnv): string[] {
  const list: string[] = [];
  if (env.CASSANDRA_JAVA) list.push(env.CASSANDRA_JAVA);
  const jvm = '/usr/lib/jvm';
  if (fs.existsSync(jvm)) {
    for (const dir of fs.readdirSync(jvm).filter((d) => /^(java-)?17[.-]|^java-17-/.test(d) || /openjdk-17/.test(d)).sort()) {
      list.push(path.join(jvm, dir, 'bin', 'java'));
    }
  }
  if (env.JAVA_HOME) list.push(path.join(env.JAVA_HOME, 'bin', 'java'));
  list.push('java');
  return list;
}

/**
 * The path of a Java 17 `java`. Throws one line naming what was found otherwise (the CLI prints
 * it as is; tests fail with it).
 */
export function findJava17(env: NodeJS.ProcessEnv = process.env): string {
  const seen: string[] = [];
  for (const java of candidates(env)) {
    if (java !== 'java' && !fs.existsSync(java)) continue;
    const major = javaMajor(java);
    if (major === 17) return java;
    seen.push(`${java}: ${major === null ? 'not runnable' : `Java ${major}`}`);
  }
  throw new Error(`Cassandra needs Java 17 and none was found (${seen.join('; ') || 'no java at all'}); install openjdk-17-jre-headless or set CASSANDRA_JAVA`);
}
