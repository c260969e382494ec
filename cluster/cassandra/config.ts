/**
 * What one Cassandra node is started with: its cassandra.yaml, its logback.xml and the JVM's
 * command line. Kept apart from process handling so tests can read the exact settings.
 *
 * Test-sized, not production-sized: 512 MB heap, one token per node at evenly spaced positions
 * (a deterministic ring: each node owns one third of it, and the runner can address a range a
 * given node owns), no bootstrap streaming (a fresh ring holds no data to stream), seeds = node 0.
 */
import path from 'node:path';

export interface NodePlan {
  /** 0-based. */
  index: number;
  /** 127.0.0.<index + 1>: every node of a ring on its own loopback address. */
  address: string;
  /** CQL; the same on every node of a ring (cassandra-driver 4 reads `system.peers`, which has no port column). */
  nativePort: number;
  /** Internode (gossip, messaging); the same on every node too. */
  storagePort: number;
  /** Local JMX (127.0.0.1 only, distinct per node): nodetool, flush, compaction stats. */
  jmxPort: number;
  /** The node's one token (Murmur3, a decimal string). */
  token: string;
  /** Everything of this node: yaml, data, commit log, hints, its log file. */
  dir: string;
}

export const LOCAL_DATA_CENTER = 'datacenter1'; // what SimpleSnitch answers
export const CLUSTER_NAME = 'chat-test';

/** n evenly spaced Murmur3 tokens, each at the end of its node's range (-2^63 itself is no key's token). */
export function ringTokens(n: number): string[] {
  const min = -(2n ** 63n);
  const step = 2n ** 64n / BigInt(n);
  return Array.from({ length: n }, (_, i) => String(min + step * BigInt(i + 1) - 1n));
}

export const yamlFile = (node: NodePlan): string => path.join(node.dir, 'cassandra.yaml');
export const logFile = (node: NodePlan): string => path.join(node.dir, 'cassandra.log');

/** The yaml of one node. Strings are JSON-quoted (valid YAML) so any directory name is safe. */
export function renderYaml(node: NodePlan, seed: NodePlan): string {
  const q = (s: string): string => JSON.stringify(s);
  const d = (sub: string): string => q(path.join(node.dir, sub));
  return `# Written by cluster/cassandra (npm run cassandra): a test node, not a production setting.
cluster_name: ${q(CLUSTER_NAME)}
num_tokens: 1
initial_token: ${q(node.token)}
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
auto_bootstrap: false
endpoint_snitch: SimpleSnitch
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: ${q(`${seed.address}:${seed.storagePort}`)}
listen_address: ${node.address}
rpc_address: ${node.address}
storage_port: ${node.storagePort}
native_transport_port: ${node.nativePort}
start_native_transport: true
data_file_directories: [${d('data')}]
commitlog_directory: ${d('commitlog')}
saved_caches_directory: ${d('saved_caches')}
hints_directory: ${d('hints')}
cdc_raw_directory: ${d('cdc_raw')}
commitlog_sync: periodic
commitlog_sync_period: 10000ms
authenticator: AllowAllAuthenticator
authorizer: AllowAllAuthorizer
disk_failure_policy: stop
commit_failure_policy: stop
concurrent_reads: 8
concurrent_writes: 8
concurrent_counter_writes: 8
concurrent_compactors: 1
memtable_allocation_type: offheap_objects
auto_snapshot: false
`;
}

/** INFO to stdout (the node's log file). Without a config logback logs at DEBUG: megabytes a minute. */
export function renderLogback(): string {
  return `<configuration scan="false">
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="STDOUT"/></root>
</configuration>
`;
}

/** conf/jvm17-server.options of Cassandra 5.0 (JPMS), plus java.nio for Netty's direct buffers. */
export const JVM17_MODULE_OPTIONS: readonly string[] = [
  ...['java.base/jdk.internal.misc', 'java.management.rmi/com.sun.jmx.remote.internal.rmi', 'java.rmi/sun.rmi.registry', 'java.rmi/sun.rmi.server', 'java.sql/java.sql', 'java.base/java.lang.ref', 'jdk.unsupported/sun.misc', 'jdk.compiler/com.sun.tools.javac.file', 'jdk.attach/sun.tools.attach'].flatMap((m) => ['--add-exports', `${m}=ALL-UNNAMED`]),
  ...[
    'java.base/java.lang.module',
    'java.base/jdk.internal.loader',
    'java.base/jdk.internal.ref',
    'java.base/jdk.internal.reflect',
    'java.base/jdk.internal.math',
    'java.base/jdk.internal.module',
    'java.base/jdk.internal.util.jar',
    'jdk.management/com.sun.management.internal',
    'java.base/sun.nio.ch',
    'java.base/java.io',
    'java.base/java.lang.reflect',
    'jdk.compiler/com.sun.tools.javac',
    'java.base/java.lang',
    'java.base/java.util',
    'java.base/java.nio',
  ].flatMap((m) => ['--add-opens', `${m}=ALL-UNNAMED`]),
];

export interface JvmSettings {
  lib: string;
  jamm: string;
  heapMb: number;
  extra: readonly string[];
  /** Flush the schema tables after every schema change (StartCassandraOptions.fastSchema). */
  flushSchema: boolean;
}

/**
 * The java command line of one node. What `bin/cassandra` would do minus its root check (the
 * daemon class has none): the JPMS options, jamm as agent, foreground, config and storage dir,
 * no wait for gossip to settle and a short ring delay (loopback test nodes, not a WAN).
 */
export function jvmArgs(node: NodePlan, jvm: JvmSettings): string[] {
  return [
    `-Xms${jvm.heapMb}m`,
    `-Xmx${jvm.heapMb}m`,
    '-Xss512k',
    '-XX:+UseG1GC',
    '-XX:+ParallelRefProcEnabled',
    '-XX:MaxGCPauseMillis=300',
    '-XX:+PerfDisableSharedMem',
    `-XX:ErrorFile=${path.join(node.dir, 'hs_err_%p.log')}`,
    '-Djava.net.preferIPv4Stack=true',
    '-Djdk.attach.allowAttachSelf=true',
    ...JVM17_MODULE_OPTIONS,
    '-Dio.netty.tryReflectionSetAccessible=true',
    '-Dio.netty.allocator.useCacheForAllThreads=true',
    '-Dio.netty.allocator.maxOrder=11',
    `-javaagent:${jvm.jamm}`,
    '-Dcassandra-foreground=yes',
    `-Dcassandra.config=file://${yamlFile(node)}`,
    `-Dcassandra.storagedir=${node.dir}`,
    `-Dcassandra.logdir=${path.join(node.dir, 'logs')}`,
    `-Dlogback.configurationFile=${path.join(node.dir, 'logback.xml')}`,
    `-Dcassandra.jmx.local.port=${node.jmxPort}`,
    '-Dcassandra.skip_wait_for_gossip_to_settle=0',
    '-Dcassandra.ring_delay_ms=100',
    '-Dcassandra.superuser_setup_delay_ms=0',
    // Without the flush of the schema tables per statement a fresh keyspace of the chat schema is
    // made in ~3.5 s instead of ~17, but a node killed and restarted can come back without the
    // schema changes it had (Cassandra's own note: "tests which do not restart nodes"; seen here:
    // a restarted ring node without the probe keyspace). Only for nodes that are never restarted.
    ...(jvm.flushSchema ? [] : ['-Dcassandra.test.flush_local_schema_changes=false']),
    ...jvm.extra,
    '-cp',
    `${jvm.lib}/*`,
    'org.apache.cassandra.service.CassandraDaemon',
  ];
}
