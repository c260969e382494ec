/**
 * The web app in headless Chromium, driven as a person would (by role and label): sign-in and
 * sign-out, a refused sign-in, two people in two browser contexts chatting live (reply, mention,
 * reaction, edit, delete, typing), a stream cut in the middle that resumes without a lost or
 * repeated message, and history loaded page by page while scrolling up. Every request goes
 * through a TCP proxy the test can cut (the node's public base URL is the proxy's).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createChatClient, ok } from '../client/index.ts';
import { ensureWebBuild, launchChromium, screenshot, signIn } from './helpers/browser.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { TcpProxy } from './helpers/tcp-proxy.ts';
import { machineToken, userToken } from './helpers/tokens.ts';

describe('browser: sign-in and chat', () => {
  let node: TestNode;
  let proxy: TcpProxy;
  let browser: Browser;
  let origin: string;
  const contexts: BrowserContext[] = [];

  const newPage = async (): Promise<Page> => {
    const ctx = await browser.newContext({ viewport: { width: 1100, height: 720 } });
    contexts.push(ctx);
    return ctx.newPage();
  };
  const messages = (page: Page) => page.getByRole('log', { name: 'Messages' });
  const message = (page: Page, label: string) => messages(page).getByRole('listitem', { name: label, exact: true });

  before(async () => {
    await ensureWebBuild();
    proxy = await TcpProxy.start();
    origin = `http://127.0.0.1:${proxy.port}`;
    node = await startTestNode({ CHAT_PUBLIC_BASE_URL: `${origin}/api/v1`, CHAT_RATE_SEND: '1000/10s' });
    proxy.target = node.port;
    browser = await launchChromium();
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await node?.stop();
    await proxy?.close();
  });

  test('browser: a person signs in with the login page, lands in their tenant and application, and signs out', async () => {
    const page = await newPage();
    await signIn(page, origin, /Bob Baker/);
    await page.waitForURL(/#\/t\/acme\/support$/);
    assert.equal(await page.getByLabel('Tenant').inputValue(), 'acme');
    assert.equal(await page.getByLabel('Application').inputValue(), 'support');
    assert.equal(await page.getByLabel('Signed in as').textContent(), 'Bob Baker');
    assert.equal(new URL(page.url()).search, '', 'the code left the address bar');
    await screenshot(page, 'signed-in');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor(); // the session is gone
  });

  test('browser: the chat token is renewed before its 10 minutes run out', async () => {
    const page = await newPage();
    await page.clock.install();
    await signIn(page, origin, /Carol Chen/);
    const stored = () => page.evaluate("JSON.parse(sessionStorage.getItem('chat.session'))") as Promise<{ accessToken: string; expiresAt: number }>;
    const before = await stored();
    const renewed = page.waitForResponse((r) => new URL(r.url()).pathname === '/auth/renew' && r.status() === 200);
    await page.clock.fastForward('09:05'); // the app renews a minute before expiry
    await renewed;
    let after = await stored();
    for (let i = 0; i < 50 && after.accessToken === before.accessToken; i++) {
      await page.waitForTimeout(100); // the app stores the answer a moment after it arrives
      after = await stored();
    }
    assert.notEqual(after.accessToken, before.accessToken);
    assert.ok(after.expiresAt > before.expiresAt);
    // The next calls carry the new token (the presence heartbeat, every 25 s).
    const next = page.waitForRequest((r) => r.url().includes('/presence/heartbeat'));
    await page.clock.fastForward(30_000);
    assert.equal((await next).headers().authorization, `Bearer ${after.accessToken}`);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  });

  test('browser: a disabled account is refused with chat_access_not_granted', async () => {
    const page = await newPage();
    await page.goto(`${origin}/app/`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: /Oscar Olsen/ }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(String(await alert.textContent()), /may not use chat/);
    await screenshot(page, 'sign-in-refused');
  });

  let alice: Page;
  let bob: Page;

  test('browser: two people in two browser contexts see each other live', async () => {
    bob = await newPage();
    await signIn(bob, origin, /Bob Baker/); // Bob has used chat: the lookup knows him
    alice = await newPage();
    await signIn(alice, origin, /Alice Anders/);

    await alice.getByRole('button', { name: 'New conversation' }).click();
    await alice.getByLabel('Person').fill('bo');
    await alice.getByRole('button', { name: /Bob Baker \(bob\)/ }).click();
    await alice.getByRole('button', { name: 'Create' }).click();
    await alice.getByRole('heading', { name: 'Bob Baker' }).waitFor();
    await alice.getByLabel('Message', { exact: true }).fill('Hello Bob');
    await alice.getByLabel('Message', { exact: true }).press('Enter');
    await message(alice, 'Alice Anders: Hello Bob').waitFor();

    // Bob's list shows the new conversation, unread, without reloading.
    const link = bob.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: /Alice Anders/ });
    await link.waitFor();
    assert.match(String(await link.textContent()), /unread/);
    await link.click();
    await message(bob, 'Alice Anders: Hello Bob').waitFor();
    await bob.getByRole('link', { name: /Alice Anders/ }).filter({ hasNotText: 'unread' }).waitFor(); // read

    // Typing, then a reply, seen live on the other side.
    await bob.getByLabel('Message', { exact: true }).fill('Hi Al');
    await alice.getByText('Bob Baker is typing…').waitFor();
    await message(bob, 'Alice Anders: Hello Bob').getByRole('button', { name: 'Reply' }).click();
    await bob.getByLabel('Message', { exact: true }).fill('Hi Alice');
    await bob.getByRole('button', { name: 'Send' }).click();
    const reply = message(alice, 'Bob Baker: Hi Alice');
    await reply.waitFor();
    assert.match(String(await reply.textContent()), /Alice Anders: Hello Bob/, 'the reply quotes what it answers');

    // A mention found by lookup.
    await alice.getByLabel('Message', { exact: true }).fill('look @bo');
    await alice.getByRole('button', { name: /Mention Bob Baker/ }).click();
    await alice.getByLabel('Message', { exact: true }).press('End');
    await alice.getByLabel('Message', { exact: true }).pressSequentially('here');
    await alice.getByLabel('Message', { exact: true }).press('Enter');
    await message(bob, 'Alice Anders: look @bob here').locator('mark', { hasText: '@bob' }).waitFor();

    // A reaction, an edit and a deletion, each seen by the other.
    await message(alice, 'Bob Baker: Hi Alice').getByRole('button', { name: 'React', exact: true }).click();
    await message(alice, 'Bob Baker: Hi Alice').getByRole('button', { name: 'React with 👍' }).click();
    await message(bob, 'Bob Baker: Hi Alice').getByRole('button', { name: '👍 1' }).waitFor();
    await message(bob, 'Bob Baker: Hi Alice').getByRole('button', { name: 'Edit' }).click();
    await bob.getByLabel('Edit message').fill('Hi Alice!');
    await bob.getByRole('button', { name: 'Save' }).click();
    await message(alice, 'Bob Baker: Hi Alice!').getByText('(edited)').waitFor();
    await message(alice, 'Alice Anders: Hello Bob').getByRole('button', { name: 'Delete' }).click();
    await message(alice, 'Alice Anders: Hello Bob').getByRole('button', { name: 'Confirm delete' }).click();
    await message(bob, 'Alice Anders: message deleted').waitFor();
    await screenshot(alice, 'chat-alice');
    await screenshot(bob, 'chat-bob');
  });

  test('browser: a public channel is browsed live without joining, then joined', async () => {
    const token = await userToken(node.idp, 'alice', 'chat-web');
    const api = createChatClient({ baseUrl: node.api, token: async () => token });
    const ctx = { tenant_id: 'acme', application_id: 'support' };
    const channel = await ok(api.POST('/tenants/{tenant_id}/applications/{application_id}/conversations', { params: { path: ctx }, body: { type: 'CHANNEL', name: 'announcements' } }));
    const path = Object.assign({ conversation_id: channel.conversation_id }, ctx);
    await ok(api.POST('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages', { params: { path }, body: { body: 'welcome all' } }));
    await bob.reload();
    await bob.getByRole('list', { name: 'Public channels' }).getByRole('link', { name: /announcements/ }).click();
    await message(bob, 'Alice Anders: welcome all').waitFor();
    assert.equal(await bob.getByLabel('Message', { exact: true }).count(), 0, 'no composer before joining');
    await bob.getByRole('status', { name: 'Live updates: open' }).waitFor();
    await ok(api.POST('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages', { params: { path }, body: { body: 'seen by a visitor' } }));
    await message(bob, 'Alice Anders: seen by a visitor').waitFor();
    await bob.getByRole('button', { name: 'Join channel' }).click();
    await bob.getByLabel('Message', { exact: true }).fill('glad to be here');
    await bob.getByLabel('Message', { exact: true }).press('Enter');
    await message(bob, 'Bob Baker: glad to be here').waitFor();
    await bob.getByRole('list', { name: 'Your conversations' }).getByRole('link', { name: /announcements/ }).waitFor();
    // Back to the direct conversation for the next test.
    await bob.getByRole('list', { name: 'Your conversations' }).getByRole('link', { name: /Alice Anders/ }).click();
    await message(bob, 'Bob Baker: Hi Alice!').waitFor();
  });

  test('browser: a stream cut in the middle resumes without a lost or repeated message', async () => {
    const conversation = decodeURIComponent(new URL(bob.url()).hash.split('/c/')[1] ?? '');
    assert.ok(conversation !== '');
    const api = createChatClient({ baseUrl: node.api, token: async () => token });
    const token = await userToken(node.idp, 'alice', 'chat-web');
    const path = { tenant_id: 'acme', application_id: 'support', conversation_id: conversation };
    const send = (body: string) => ok(api.POST('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages', { params: { path }, body: { body } }));

    await send('before the cut');
    await message(bob, 'Alice Anders: before the cut').waitFor();
    const cut = proxy.cut(1500); // every connection through the proxy, Bob's stream included
    assert.ok(cut > 0);
    for (let i = 1; i <= 5; i++) await send(`during the cut ${i}`); // straight to the node
    await bob.getByRole('status', { name: 'Live updates: reconnecting' }).waitFor();
    await message(bob, 'Alice Anders: during the cut 5').waitFor({ timeout: 15_000 });
    await send('after the cut');
    await message(bob, 'Alice Anders: after the cut').waitFor();
    await bob.getByRole('status', { name: 'Live updates: open' }).waitFor();

    const labels = await messages(bob).getByRole('listitem').evaluateAll((items) => items.map((li) => li.getAttribute('aria-label')));
    const tail = labels.filter((l) => l !== null && /cut/.test(l));
    assert.deepEqual(tail, [
      'Alice Anders: before the cut',
      'Alice Anders: during the cut 1',
      'Alice Anders: during the cut 2',
      'Alice Anders: during the cut 3',
      'Alice Anders: during the cut 4',
      'Alice Anders: during the cut 5',
      'Alice Anders: after the cut',
    ]);
    await screenshot(bob, 'after-cut');
  });

  test('browser: history loads page by page while scrolling up', async () => {
    const machine = await machineToken(node.idp);
    const api = createChatClient({ baseUrl: node.api, token: async () => machine });
    const ctx = { tenant_id: 'acme', application_id: 'support' };
    const group = await ok(api.POST('/tenants/{tenant_id}/applications/{application_id}/conversations', {
      params: { path: ctx },
      body: { type: 'GROUP', name: 'Long history', member_user_ids: ['alice', 'bob'], actor_user_id: 'alice' },
    }));
    const path = { tenant_id: 'acme', application_id: 'support', conversation_id: group.conversation_id };
    for (let i = 1; i <= 75; i++) {
      await ok(api.POST('/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages', { params: { path }, body: { body: `line ${i}`, actor_user_id: 'alice' } }));
    }
    await bob.getByRole('link', { name: /Long history/ }).click();
    await message(bob, 'Alice Anders: line 75').waitFor();
    assert.equal(await messages(bob).getByRole('listitem').count(), 30, 'one page first');
    for (let i = 0; i < 20 && !(await bob.getByText('Start of the conversation').isVisible()); i++) {
      await messages(bob).getByRole('listitem').first().scrollIntoViewIfNeeded();
      await bob.waitForTimeout(150);
    }
    await message(bob, 'Alice Anders: line 1').waitFor();
    assert.equal(await messages(bob).getByRole('listitem').count(), 75, 'every message once');
  });
});
