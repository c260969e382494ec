/** Services for an Edge built inside a test: real store in a temp directory, real cursor codec. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Services } from '../../src/api/services.ts';
import { CursorCodec } from '../../src/api/paging/cursor.ts';
import type { Config } from '../../src/config/index.ts';
import type { IdentityService } from '../../src/identity/identity-service.ts';
import { createStore, sqliteStorePath } from '../../src/store/index.ts';
import { ActorHost, type ChatBus } from '../../src/actors/index.ts';
import { createBus } from '../../src/bus/index.ts';
import { createPresence } from '../../src/presence/index.ts';
import { PageCache } from '../../src/api/page-cache.ts';

export async function testServices(config: Config, identity: IdentityService): Promise<Services & { cleanup(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-edge-'));
  const store = await createStore({ driver: 'sqlite', path: sqliteStorePath(dir) });
  const bus: ChatBus = createBus({ driver: 'local' });
  const actors = new ActorHost({ store, bus, enqueuePush: false });
  return {
    config,
    identity,
    vapid: { publicKey: '', privateKey: '', subject: '' },
    store,
    cursors: new CursorCodec(crypto.randomBytes(32)),
    actors,
    bus,
    presence: createPresence({ driver: 'memory', windowMs: 60_000 }),
    pages: new PageCache(),
    async cleanup() {
      await actors.close();
      await bus.close();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
