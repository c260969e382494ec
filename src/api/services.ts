/**
 * What handlers may use, handed to every handler as `input.services`. Route declarations stay
 * plain data (the OpenAPI writer loads them without starting anything).
 */
import type { Config } from '../config/index.ts';
import type { IdentityService } from '../identity/identity-service.ts';
import type { VapidKeys } from '../push/vapid.ts';
import type { Presence } from '../presence/index.ts';
import type { ChatStore, ClaimOwner } from '../store/index.ts';
import type { CursorCodec } from './paging/cursor.ts';
import type { PageCache } from './page-cache.ts';
import type { ChatBus } from '../actors/index.ts';
import type { ConversationActors } from '../sharding/types.ts';
import type { RealtimeCredentials } from '../realtime/credential.ts';
import type { WebSignIn } from '../identity/web-sign-in.ts';

export interface Services {
  config: Config;
  identity: IdentityService;
  vapid: VapidKeys;
  store: ChatStore;
  cursors: CursorCodec;
  /**
   * The conversation actors: every mutation of a conversation goes through them. The node's own
   * ActorHost in a cluster of one; in a cluster, the router that forwards to the owning node.
   */
  actors: ConversationActors;
  bus: ChatBus;
  /** Who is online (heartbeats), per account. */
  presence: Presence;
  /** Signs realtime stream credentials (absent in unit-test service sets without the stream). */
  realtime?: RealtimeCredentials;
  /** Serialized history pages, validated by the conversation's revision (page-cache.ts). */
  pages: PageCache;
  /** Sign-in of the service's own web app (absent in unit-test service sets). */
  signIn?: WebSignIn;
  /**
   * This process and the processes known to run, as owners of Idempotency-Key claims: from the
   * cluster membership. Absent on a single node: this process alone (http/idempotency.ts).
   */
  claimOwner?: () => ClaimOwner;
}
