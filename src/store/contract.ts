/**
 * The contract every ChatStore driver passes, as node:test tests. A driver's test file calls
 * `storeContract('<driver>', make)` once; the suite is never copied per driver (Dendrite's
 * WithAllDatabases). Sections live in contract/, one per part of the port.
 *
 * `make` is called once per test and the store closed after it. Each test uses its own random
 * tenant, so a shared backend needs no cleanup; time is passed through `at`, never slept on.
 */
import { describe } from 'node:test';
import { concurrencyContract } from './contract/concurrency.ts';
import { conversationContract } from './contract/conversations.ts';
import { gateContract } from './contract/gate.ts';
import type { MakeStore } from './contract/fixtures.ts';
import { listingContract } from './contract/listing.ts';
import { memberContract } from './contract/members.ts';
import { messageContract } from './contract/messages.ts';
import { reactionReadContract } from './contract/reactions-read.ts';
import { tenantContract } from './contract/tenant.ts';

export type { MakeStore } from './contract/fixtures.ts';

export function storeContract(name: string, make: MakeStore): void {
  describe(`ChatStore contract: ${name}`, () => {
    conversationContract(make);
    gateContract(make);
    listingContract(make);
    memberContract(make);
    messageContract(make);
    reactionReadContract(make);
    tenantContract(make);
    concurrencyContract(make);
  });
}
