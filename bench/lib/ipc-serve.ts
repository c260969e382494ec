/**
 * The child side of a bench load process driven over IPC (the parent side: ipc-worker.ts). Kept
 * apart so a load process loads none of the parent's process handling.
 */
import type { IpcCommand } from './ipc-worker.ts';

type Said = { type: 'hello'; pid: number } | { type: 'failed'; message: string };

/**
 * The child side: says hello, runs `handle` for each command (one answer per command is its
 * job), answers `failed` with the stack of what it throws, and exits when the parent is gone.
 */
export function serveCommands<C extends IpcCommand>(handle: (cmd: C) => Promise<void>, send: (a: Said) => void): void {
  process.on('message', (raw: unknown) => {
    handle(raw as C).catch((err: unknown) => send({ type: 'failed', message: String((err as Error).stack ?? err) }));
  });
  process.on('disconnect', () => process.exit(0));
  send({ type: 'hello', pid: process.pid });
}
