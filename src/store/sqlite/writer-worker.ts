/**
 * The writer thread of the SQLite driver (writer-thread.ts runs it): one SqliteChatStore in the
 * `writer` role, whose write methods the opening thread calls by name. Calls that arrive while a
 * batch commits land in the next group commit (batcher.ts); the outcomes of a batch go back in
 * one message, after the memo groups its triggers touched.
 *
 * Bundled on its own (`dist/sqlite-writer.mjs`, package.json's build), run from src/ under tsx.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteChatStore } from './sqlite-store.ts';
import { sendError, type FromWriter, type Reply, type ToWriter, type WriterData } from './writer-protocol.ts';

const port = parentPort!;
const data = workerData as WriterData;
const post = (message: FromWriter): void => port.postMessage(message);

let touched: string[] = [];
let replies: Reply[] = [];
let flushing = false;
let store: SqliteChatStore;
try {
  store = new SqliteChatStore(data.config, {
    role: 'writer',
    ...(data.migrations ? { migrations: data.migrations } : {}),
    onTouch: (memo, group) => touched.push(memo, group),
  });
} catch (error) {
  post({ openError: sendError(error) });
  process.exit(0);
}
post({ ready: true, appliedMigrations: store.appliedMigrations });

/** Sends what finished since the last send; runs after the batch's promises have all settled. */
function flush(): void {
  flushing = false;
  if (replies.length === 0 && touched.length === 0) return;
  post({ touched, replies, stats: store.stats() });
  touched = [];
  replies = [];
}

function settled(reply: Reply): void {
  replies.push(reply);
  if (!flushing) {
    flushing = true;
    setImmediate(flush);
  }
}

port.on('message', (message: ToWriter) => {
  if ('close' in message) {
    store.close().then(
      () => {
        flush();
        post({ closed: true });
      },
      (error: unknown) => {
        flush();
        post({ closed: true, error: sendError(error) });
      },
    );
    return;
  }
  const [id, sub, method, args] = message.call;
  const target = (store as unknown as Record<string, Record<string, (...a: unknown[]) => Promise<unknown>>>)[sub]!;
  let result: Promise<unknown>;
  try {
    result = target[method]!.apply(target, args);
  } catch (error) {
    result = Promise.reject(error);
  }
  result.then(
    (value) => settled([id, true, value]),
    (error: unknown) => settled([id, false, sendError(error)]),
  );
});
