/**
 * The cluster store: Cassandra or ScyllaDB through cassandra-driver 4.
 *
 * Opening: a bootstrap connection creates the keyspace (replication from the config), then the
 * store's client, bound to the keyspace, applies the schema (migrations.ts) and serves.
 * Load balancing is TokenAwarePolicy(DCAwareRoundRobinPolicy(localDataCenter)), set explicitly:
 * requests stay in the local data center and, every statement being prepared, go to a replica of
 * their partition (no coordinator hop). Consistency levels: cql.ts.
 *
 * Table groups, one file each with its statements: conversations.ts (+ activity.ts listings,
 * direct-pairs.ts), members.ts, messages.ts (+ buckets.ts), reactions.ts, read-state.ts,
 * profiles.ts, idempotency.ts, settings.ts, role-overrides.ts, push-devices.ts.
 */
import { CassandraHealth } from './health.ts';
import cassandra from 'cassandra-driver';
import type { CassandraStoreConfig, ChatStore } from '../types.ts';
import { ConversationViews } from './conversation-listing.ts';
import { CassandraConversationStore } from './conversation-store.ts';
import { ConversationsTable } from './conversations.ts';
import { BUCKET_SIZE } from './buckets.ts';
import { CassandraHandle, type CqlClient, type StatementCounts } from './cql.ts';
import { DirectPairsTable } from './direct-pairs.ts';
import { CassandraIdempotencyStore } from './idempotency.ts';
import { CassandraMemberStore } from './member-store.ts';
import { MembersTable } from './members.ts';
import { CassandraMessageStore } from './message-store.ts';
import { MessagesTable } from './messages.ts';
import { applySchema, checkIdentifier, createKeyspace, type Replication } from './migrations.ts';
import { CassandraProfileStore } from './profiles.ts';
import { CassandraPushDeviceStore } from './push-devices.ts';
import { CassandraReactionStore, ReactionsTable } from './reactions.ts';
import { CassandraReadStateStore, ReadStateTable } from './read-state.ts';
import { CassandraRoleOverrideStore } from './role-overrides.ts';
import { CassandraSettingsStore } from './settings.ts';
import { SeqLeases, type SeqRangeOptions } from './seq-leases.ts';

export interface CassandraOpenOptions {
  /** Seqs per message partition; only tests change it (it is part of the data format). */
  bucketSize?: number;
  /** Sizes of the seq ranges an owner takes (seq-leases.ts); tests shrink them to cross ranges often. */
  seqRanges?: SeqRangeOptions;
  /** Tests: wraps the connected client (to hold or fail requests of a real server). */
  wrapClient?: (client: CqlClient) => CqlClient;
}

function clientOptions(config: CassandraStoreConfig, keyspace?: string): cassandra.ClientOptions {
  const { DCAwareRoundRobinPolicy, TokenAwarePolicy } = cassandra.policies.loadBalancing;
  return {
    contactPoints: config.contactPoints,
    localDataCenter: config.localDataCenter,
    ...(keyspace === undefined ? {} : { keyspace }),
    ...(config.username == null ? {} : { credentials: { username: config.username, password: config.password ?? '' } }),
    policies: {
      loadBalancing: new TokenAwarePolicy(new DCAwareRoundRobinPolicy(config.localDataCenter)),
      // An idempotent statement (every plain one: optionsFor) unanswered after 300 ms is sent once
      // more, to the next coordinator: a coordinator that waits on a replica which died a moment
      // ago (not yet convicted) would otherwise hold it for the whole server timeout.
      speculativeExecution: new cassandra.policies.speculativeExecution.ConstantSpeculativeExecutionPolicy(300, 1),
    },
    queryOptions: { consistency: cassandra.types.consistencies.localQuorum, serialConsistency: cassandra.types.consistencies.localSerial, prepare: true },
  };
}

export function checkConfig(config: CassandraStoreConfig): void {
  if (!Array.isArray(config.contactPoints) || config.contactPoints.length === 0 || config.contactPoints.some((c) => typeof c !== 'string' || c === '')) {
    throw new RangeError('cassandra contactPoints must be a non-empty list of host[:port] strings');
  }
  if (typeof config.localDataCenter !== 'string' || config.localDataCenter === '') throw new RangeError('cassandra localDataCenter must be set');
  checkIdentifier(config.keyspace, 'cassandra keyspace');
  if (config.password != null && config.username == null) throw new RangeError('cassandra password given without username');
  const rf = config.replicationFactor;
  if (rf !== undefined && (!Number.isInteger(rf) || rf < 1)) throw new RangeError('cassandra replicationFactor must be a positive integer');
}

/** The keyspace's replication: as given, else NetworkTopologyStrategy in the local data center. */
export function replicationOf(config: CassandraStoreConfig): Replication {
  return config.replication ?? { class: 'NetworkTopologyStrategy', [config.localDataCenter]: config.replicationFactor ?? 3 };
}

export class CassandraChatStore implements ChatStore {
  readonly driver = 'cassandra' as const;
  readonly conversations: CassandraConversationStore;
  readonly members: CassandraMemberStore;
  readonly messages: CassandraMessageStore;
  readonly reactions: CassandraReactionStore;
  readonly readState: CassandraReadStateStore;
  readonly profiles: CassandraProfileStore;
  readonly idempotency: CassandraIdempotencyStore;
  readonly settings: CassandraSettingsStore;
  readonly roleOverrides: CassandraRoleOverrideStore;
  readonly pushDevices: CassandraPushDeviceStore;
  /** The seq ranges this store holds (seq-leases.ts). */
  readonly leases: SeqLeases;
  private readonly handle: CassandraHandle;
  /** The driver client's health, for metrics; set by `open` (a recording client has none). */
  driverHealth: CassandraHealth | null = null;

  /** Wires the stores over a connected client (the statement tests pass a recording one). */
  constructor(client: CqlClient, options: CassandraOpenOptions = {}) {
    const bucketSize = options.bucketSize ?? BUCKET_SIZE;
    if (!Number.isSafeInteger(bucketSize) || bucketSize < 1) throw new RangeError('bucketSize must be a positive integer');
    const h = (this.handle = new CassandraHandle(client));
    const conversations = new ConversationsTable(h);
    const members = new MembersTable(h);
    const messages = new MessagesTable(h, bucketSize);
    const reactions = new ReactionsTable(h);
    const readState = new ReadStateTable(h, messages);
    this.profiles = new CassandraProfileStore(h);
    const views = new ConversationViews(h, conversations, members, readState, this.profiles);
    const leases = (this.leases = new SeqLeases(conversations, options.seqRanges));
    this.conversations = new CassandraConversationStore(h, conversations, members, new DirectPairsTable(h), readState, views, leases);
    this.members = new CassandraMemberStore(h, conversations, members, readState, this.profiles);
    this.messages = new CassandraMessageStore(h, conversations, messages, reactions, this.profiles, leases);
    this.reactions = new CassandraReactionStore(h, conversations, messages, reactions);
    this.readState = new CassandraReadStateStore(h, conversations, readState);
    this.idempotency = new CassandraIdempotencyStore(h);
    this.settings = new CassandraSettingsStore(h);
    this.roleOverrides = new CassandraRoleOverrideStore(h);
    this.pushDevices = new CassandraPushDeviceStore(h);
  }

  /** Connects, creates the keyspace and tables if needed, and answers a ready store. */
  static async open(config: CassandraStoreConfig, options: CassandraOpenOptions = {}): Promise<CassandraChatStore> {
    checkConfig(config);
    const replication = replicationOf(config);
    const bootstrap = new cassandra.Client(clientOptions(config));
    try {
      await bootstrap.connect();
      await createKeyspace(bootstrap, config.keyspace, replication);
    } finally {
      await bootstrap.shutdown();
    }
    const client = new cassandra.Client(clientOptions(config, config.keyspace));
    try {
      await client.connect();
      await applySchema(client, config.keyspace);
    } catch (error) {
      await client.shutdown();
      throw error;
    }
    const store = new CassandraChatStore(options.wrapClient ? options.wrapClient(client) : client, options);
    const health = (store.driverHealth = new CassandraHealth(client));
    store.handle.replicaDown = () => health.downIn(config.localDataCenter);
    return store;
  }

  /** Statements run since opening, by kind (benchmarks, tests: how many Paxos rounds a send costs). */
  statementCounts(): StatementCounts {
    return Object.assign({}, this.handle.counts);
  }

  /** Waits for the operations in flight (their callers get their answers), then disconnects. */
  close(): Promise<void> {
    return this.handle.close();
  }
}
