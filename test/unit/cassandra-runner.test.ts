/**
 * The Cassandra runner's parts that need no JVM: Java detection, the ring's tokens and ports,
 * the yaml, and the guarantee that a "JVM" never outlives the process that started it, whatever
 * way that process ends (a stand-in process whose command line names CassandraDaemon, started
 * through the same code as a real node: test/fixtures/jvm-owner.ts). The real server runs in
 * the store and cluster tests.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { describe, test } from 'node:test';
import { jvmArgs, renderYaml, ringTokens } from '../../cluster/cassandra/config.ts';
import { findJava17, javaMajor, parseMajor } from '../../cluster/cassandra/java.ts';
import { isAlive } from '../../cluster/cassandra/jvms.ts';
import { planNodes } from '../../cluster/cassandra/plan.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('cassandra runner: java, ring, yaml', () => {
  test('Java versions are read from `java -version`; the runner picks a 17', () => {
    assert.equal(parseMajor('openjdk version "17.0.15" 2025-04-15'), 17);
    assert.equal(parseMajor('openjdk version "25" 2025-09-16'), 25);
    assert.equal(parseMajor('java version "1.8.0_292"'), 8);
    assert.equal(parseMajor('no version here'), null);
    assert.equal(javaMajor(findJava17()), 17);
    // A CASSANDRA_JAVA that is not 17 is passed over (never a Java 24+, where Cassandra cannot start).
    assert.equal(javaMajor(findJava17({ CASSANDRA_JAVA: '/nonexistent/java', PATH: process.env.PATH })), 17);
  });

  test('one token per node, evenly spaced; each node owns the range ending at its token', () => {
    assert.deepEqual(ringTokens(1), [String(2n ** 63n - 1n)]);
    const three = ringTokens(3).map(BigInt);
    assert.equal(three[2], 2n ** 63n - 1n - (2n ** 64n % 3n));
    assert.equal(three[1]! - three[0]!, three[2]! - three[1]!);
  });

  test('a ring: one address per node, shared CQL and internode ports, fixed ports from a given CQL port', async () => {
    const base = await freeBase();
    const nodes = await planNodes('/data', 3, base);
    assert.deepEqual(
      nodes.map((n) => [n.address, n.nativePort, n.storagePort, n.jmxPort, n.dir]),
      [0, 1, 2].map((i) => [`127.0.0.${i + 1}`, base, base + 1, base + 2 + i, `/data/node${i + 1}`]),
    );
    const yaml = renderYaml(nodes[1]!, nodes[0]!);
    for (const line of ['listen_address: 127.0.0.2', `native_transport_port: ${base}`, `storage_port: ${base + 1}`, `seeds: "127.0.0.1:${base + 1}"`, `initial_token: "${nodes[1]!.token}"`, 'endpoint_snitch: SimpleSnitch']) {
      assert.ok(yaml.includes(line), line);
    }
    const args = jvmArgs(nodes[1]!, { lib: '/lib', jamm: '/lib/jamm-0.4.0.jar', heapMb: 512, extra: [], flushSchema: true });
    assert.deepEqual(args.slice(-3), ['-cp', '/lib/*', 'org.apache.cassandra.service.CassandraDaemon']);
    for (const a of ['-Xmx512m', '-javaagent:/lib/jamm-0.4.0.jar', '-Dcassandra-foreground=yes', `-Dcassandra.config=file:///data/node2/cassandra.yaml`, '--add-opens', 'java.base/java.nio=ALL-UNNAMED']) assert.ok(args.includes(a), a);
    // A node that may be restarted on its data keeps Cassandra's flush of schema changes.
    const FAST = '-Dcassandra.test.flush_local_schema_changes=false';
    assert.ok(!args.includes(FAST));
    assert.ok(jvmArgs(nodes[1]!, { lib: '/lib', jamm: '/lib/jamm-0.4.0.jar', heapMb: 512, extra: [], flushSchema: false }).includes(FAST));

    const blocker = net.createServer().listen(base + 3, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    try {
      await assert.rejects(planNodes('/data', 3, base), new RegExp(`${base + 3} are taken`));
    } finally {
      blocker.close();
    }
    await assert.rejects(planNodes('/data', 4, 0), /nodes must be 1 to 3/);
  });
});

/** A CQL port with the 4 after it free too. */
async function freeBase(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const a = s.address() as net.AddressInfo;
        s.close(() => resolve(a.port));
      });
    });
    if (port < 60_000) return port;
  }
}

/** Starts the owner fixture; answers it and its stand-in JVM's pid. */
async function owner(mode: 'wait' | 'exit' | 'own-handler'): Promise<{ child: ReturnType<typeof spawn>; jvm: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/fixtures/jvm-owner.ts'), mode, `jvm-owner-${randomUUID()}`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`owner exited with ${code} before printing the pid`)));
  });
  return { child, jvm: Number(line) };
}

async function gone(pid: number, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

describe('cassandra runner: no JVM outlives its owner', () => {
  test('the owner is SIGKILLed: the watchdog kills the JVM', async () => {
    const { child, jvm } = await owner('wait');
    assert.ok(isAlive(jvm));
    child.kill('SIGKILL');
    assert.ok(await gone(jvm), `pid ${jvm} still runs after its owner was SIGKILLed`);
  });

  test('the owner exits: the exit hook kills the JVM', async () => {
    const { jvm } = await owner('exit');
    assert.ok(await gone(jvm), `pid ${jvm} still runs after its owner exited`);
  });

  test('the owner gets SIGTERM with no handler of its own: the JVM dies and so does the owner', async () => {
    const { child, jvm } = await owner('wait');
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    child.kill('SIGTERM');
    assert.equal(await exited, 'SIGTERM', 'the signal still ends the owner');
    assert.ok(await gone(jvm));
  });

  test('the owner has its own SIGTERM handler: the JVM dies, the owner ends when its handler says so', async () => {
    const { child, jvm } = await owner('own-handler');
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.ok(await gone(jvm));
    assert.equal(await exited, 0);
  });
});
