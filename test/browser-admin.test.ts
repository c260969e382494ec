/**
 * Administration in the web app, in headless Chromium: shown only to holders of an
 * administration capability; an administrator takes a permission away from a role and it takes
 * effect for another person at once (and comes back); the tenant_owner role cannot be edited;
 * retention and the overview.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createChatClient, ok } from '../client/index.ts';
import { ensureWebBuild, launchChromium, screenshot, signIn } from './helpers/browser.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { userToken } from './helpers/tokens.ts';

describe('browser: administration', () => {
  let node: TestNode;
  let browser: Browser;
  let carol: Page;
  let bob: Page;

  before(async () => {
    await ensureWebBuild();
    node = await startTestNode();
    browser = await launchChromium();
    carol = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
    bob = await (await browser.newContext({ viewport: { width: 1100, height: 720 } })).newPage();
  });
  after(async () => {
    await browser?.close();
    await node?.stop();
  });

  test('browser: an administrator changes what a role may do, and it takes effect for another person', async () => {
    const token = await userToken(node.idp, 'bob', 'chat-web');
    const api = createChatClient({ baseUrl: node.api, token: async () => token });
    const conv = await ok(api.POST('/tenants/{tenant_id}/applications/{application_id}/conversations', {
      params: { path: { tenant_id: 'acme', application_id: 'support' } },
      body: { type: 'GROUP', name: 'Team room', member_user_ids: ['carol'] },
    }));
    await signIn(bob, node.origin, /Bob Baker/);
    assert.equal(await bob.getByRole('link', { name: 'Administration' }).count(), 0, 'no administration for a plain member');
    await bob.goto(`${node.origin}/app/#/t/acme/support/c/${conv.conversation_id}`);
    const box = bob.getByLabel('Message', { exact: true });
    await box.fill('before the change');
    await box.press('Enter');
    await bob.getByRole('listitem', { name: 'Bob Baker: before the change', exact: true }).waitFor();

    await signIn(carol, node.origin, /Carol Chen/);
    await carol.getByRole('link', { name: 'Administration' }).click();
    await carol.getByRole('heading', { name: /Overview/ }).waitFor();
    await carol.getByRole('button', { name: 'Roles and permissions' }).click();
    const owner = carol.getByRole('form', { name: 'Role Owner' });
    await owner.getByText('Locked: holds every permission').waitFor();
    assert.equal(await owner.getByRole('checkbox', { name: 'messages.send' }).isDisabled(), true, 'tenant_owner is locked');
    assert.equal(await owner.getByRole('button', { name: /Save/ }).count(), 0);
    const member = carol.getByRole('form', { name: 'Role App member' });
    await member.getByRole('checkbox', { name: 'messages.send' }).uncheck();
    await member.getByRole('button', { name: 'Save App member' }).click();
    await member.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await screenshot(carol, 'admin-roles');

    // Bob's open page: the next send is refused with the contract's missing_capability.
    await box.fill('after the change');
    await box.press('Enter');
    const alert = bob.getByRole('alert');
    await alert.waitFor();
    assert.match(String(await alert.textContent()), /missing capability: messages\.send/);
    await bob.reload();
    await bob.getByRole('listitem', { name: 'Bob Baker: before the change', exact: true }).waitFor();
    assert.equal(await bob.getByLabel('Message', { exact: true }).isDisabled(), true, 'the composer is off without messages.send');
    await screenshot(bob, 'admin-effect');

    await member.getByRole('button', { name: 'Restore defaults of App member' }).click();
    await member.getByRole('status').filter({ hasText: 'Restored' }).waitFor();
    await bob.reload();
    const again = bob.getByLabel('Message', { exact: true });
    await again.fill('allowed again');
    await again.press('Enter');
    await bob.getByRole('listitem', { name: 'Bob Baker: allowed again', exact: true }).waitFor();
  });

  test('browser: retention and the overview', async () => {
    await carol.getByRole('button', { name: 'Message retention' }).click();
    await carol.getByRole('checkbox', { name: 'Keep messages forever' }).uncheck();
    await carol.getByLabel('Delete messages older than (days)').fill('30');
    await carol.getByRole('button', { name: 'Save retention' }).click();
    await carol.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await carol.reload();
    await carol.getByRole('button', { name: 'Message retention' }).click();
    assert.equal(await carol.getByLabel('Delete messages older than (days)').inputValue(), '30');
    await carol.getByRole('button', { name: 'Overview' }).click();
    const groups = carol.getByRole('definition').nth(4);
    await groups.waitFor();
    assert.equal(await groups.textContent(), '1');
    await carol.getByRole('button', { name: 'Applications' }).click();
    await carol.getByRole('rowheader', { name: 'Support Desk' }).waitFor();
    await screenshot(carol, 'admin-applications');
  });
});
