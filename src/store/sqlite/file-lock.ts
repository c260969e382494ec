/**
 * The exclusive mode's guard: one process per data file. A small SQLite file beside the
 * database (`<file>.lock`) held in EXCLUSIVE locking mode by a write at open; the operating
 * system drops the lock when the process exits, crashes included, so no stale lock survives a
 * SIGKILL. A second process fails to take it at once and refuses to open the store.
 *
 * (The database itself runs in NORMAL locking mode, so that the checkpointer's own connection,
 * checkpointer.ts, can work beside the node's.)
 */
import Database from 'better-sqlite3';

export class FileLock {
  private constructor(private readonly db: Database.Database) {}

  static take(dbPath: string): FileLock {
    const db = new Database(`${dbPath}.lock`, { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      db.pragma('journal_mode = MEMORY'); // nothing worth a journal file here
      db.pragma('busy_timeout = 0');
      db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER)');
      db.exec('BEGIN EXCLUSIVE');
      db.prepare('DELETE FROM holder').run();
      db.prepare('INSERT INTO holder (pid) VALUES (?)').run(process.pid);
      db.exec('COMMIT'); // in EXCLUSIVE locking mode the lock stays held after the commit
    } catch (error) {
      db.close();
      throw new Error(`${dbPath} is in use by another process (database is locked): ${(error as Error).message}`);
    }
    return new FileLock(db);
  }

  release(): void {
    this.db.close();
  }
}
