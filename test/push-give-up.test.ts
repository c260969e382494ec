/**
 * A push job the work queue gives up is counted (`chat_push_jobs_given_up_total`) and logged with
 * the tenant, application, conversation and message it was for. The stand-in push service asks
 * for a Retry-After longer than a notification is worth (10 minutes), which gives the job up at
 * once.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { StandInPushService } from './helpers/push-service.ts';
import { userToken } from './helpers/tokens.ts';

let node: TestNode;
let push: StandInPushService;
const tok: Record<string, string> = {};
const post = (url: string, token: string, body: unknown): Promise<Res> =>
  request(url, { method: 'POST', headers: { ...bearer(token), 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

before(async () => {
  push = await StandInPushService.start();
  node = await startTestNode({ CHAT_PUSH_CA_FILE: push.caFile, CHAT_PUSH_TIMEOUT_MS: '1500' });
  push.trustVapidKey((await request(`${node.api}/notifications/vapid-public-key`)).json().public_key as string);
  for (const u of ['bob', 'carol']) tok[u] = await userToken(node.idp, u);
});
after(async () => {
  await node?.stop();
  await push?.stop();
  if (node) fs.rmSync(node.dataDir, { recursive: true, force: true });
});

const givenUp = async (): Promise<number> => {
  const text = (await request(`http://127.0.0.1:${node.metricsPort}/metrics`)).text;
  return Number(/^chat_push_jobs_given_up_total (\d+)$/m.exec(text)?.[1] ?? NaN);
};

test('a job given up is counted and its log line names the message', async () => {
  assert.equal(await givenUp(), 0);
  const carol = push.subscribe();
  const reg = await post(`${node.api}/tenants/acme/notifications/push/devices`, tok.carol!, { platform: 'web', subscription: carol.json });
  assert.equal(reg.status, 204, reg.text);
  push.answer(carol, { status: 429, retryAfter: '600' });
  const app = `${node.api}/tenants/acme/applications/support`;
  const conv = await post(`${app}/conversations`, tok.bob!, { type: 'DIRECT', member_user_ids: ['carol'] });
  const conversation_id = conv.json().conversation_id as string;
  const sent = await post(`${app}/conversations/${conversation_id}/messages`, tok.bob!, { body: 'lost in the push' });
  assert.equal(sent.status, 201, sent.text);
  const message_id = sent.json().message_id as string;

  await push.waitFor(() => push.for(carol).length === 1, 10_000, 'the one attempt');
  const deadline = Date.now() + 10_000;
  while ((await givenUp()) !== 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.equal(await givenUp(), 1);
  const line = node.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((o) => o.msg === 'push job given up');
  assert.ok(line, 'logged');
  assert.deepEqual(
    { tenant_id: line.tenant_id, application_id: line.application_id, conversation_id: line.conversation_id, message_id: line.message_id },
    { tenant_id: 'acme', application_id: 'support', conversation_id, message_id },
  );
  assert.match(String(line.err), /429/);
  assert.equal(push.for(carol).length, 1, 'not retried');
});
