/**
 * The sharding layer's shapes: what route handlers call instead of the ActorHost, what a node
 * publishes about itself, and what a view change tells listeners.
 *
 * `ConversationActors` is the ActorHost's public operation surface, picked from the class so the
 * host stays untouched and the two can never drift apart: the local host and the cluster router
 * (routed-actors.ts) are interchangeable behind it.
 */
import type { ActorHost } from '../actors/index.ts';

export type ConversationActors = Pick<
  ActorHost,
  | 'createConversation'
  | 'sendMessage'
  | 'editMessage'
  | 'deleteMessage'
  | 'addReaction'
  | 'removeReaction'
  | 'addMember'
  | 'removeMember'
  | 'leave'
  | 'updateConversation'
  | 'archive'
  | 'unarchive'
  | 'softDelete'
  | 'markRead'
  | 'typing'
>;

/** What the local host must offer the cluster besides the operations. */
export type LocalActorHost = ConversationActors & Pick<ActorHost, 'passivate'>;

/** One node as it registers itself in Redis. */
export interface NodeInfo {
  nodeId: string;
  /** Base URL of the node's internal listener, e.g. `http://10.0.0.5:9100` (no trailing slash). */
  internalUrl: string;
  /** Epoch ms when this process started (tells a restart from a long-lived node in logs). */
  startedAt: number;
  /** Random per process: tells two processes registering the same nodeId apart. */
  instance: string;
}

/** A node's picture of the live set, replaced as a whole on every change. */
export interface MembershipView {
  /** Grows by one with every change this node sees; a ring built from a view carries it. */
  version: number;
  /** Live nodes sorted by nodeId. */
  nodes: readonly NodeInfo[];
}

export interface ViewChange {
  view: MembershipView;
  joined: readonly string[];
  left: readonly string[];
}

export interface ShardingLog {
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
}

export const silentLog: ShardingLog = { info: () => {}, warn: () => {} };
