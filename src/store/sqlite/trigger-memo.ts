/**
 * A memo of read answers that the database itself invalidates, for the SQLite driver's exclusive
 * mode (one process owns the file, so its connection sees every write).
 *
 * Answers are kept in groups (a conversation, a user of a tenant). TEMP triggers on the tables an
 * answer depends on call a JS function with the group of every row inserted, updated (old and new
 * row) or deleted, from any statement, trigger programs included, and the function drops that
 * group's answers before the write's transaction ends. Reads never run inside a write batch (both
 * are synchronous on the one thread), so no answer outlives the state it describes; a rolled-back
 * write only drops answers that were still right.
 *
 * Not for shared-file mode: TEMP triggers see this connection's writes only. Bounded: at most
 * `maxAnswers` answers in all (the groups cached first go first) and `maxPerGroup` per group.
 *
 * With the writer thread (writer-thread.ts) the triggers live on the writer's connection and the
 * memo on the reading thread's: the writer's memo (`db` given, `onTouch` set) reports every
 * touched group, the writer posts them with the batch's answers, and the reading thread's memo
 * (`db` null: no triggers) drops them through `touch` before any of those answers is delivered.
 */
import type { Db } from './shared.ts';

export interface TriggerMemoSpec {
  /** The SQL function the triggers call (unique per connection). */
  fn: string;
  /** Tables whose row changes invalidate. */
  tables: readonly string[];
  /** SQL expression of a row's group, over `NEW` or `OLD`. */
  group: (row: 'NEW' | 'OLD') => string;
}

export interface TriggerMemoStats {
  hits: number;
  misses: number;
  /** Invalidation calls (rows changed in the watched tables). */
  touches: number;
}

export class TriggerMemo<V> {
  /** The memo's name: its SQL function, and how the writer thread's reports name it. */
  readonly name: string;
  private readonly groups = new Map<string, Map<string, V>>();
  private answers = 0;
  readonly stats: TriggerMemoStats = { hits: 0, misses: 0, touches: 0 };

  constructor(
    db: Db | null,
    spec: TriggerMemoSpec,
    private readonly maxAnswers: number,
    private readonly maxPerGroup: number,
    /** Told of every touched group (the writer thread forwards them to the reading thread). */
    onTouch?: (fn: string, group: string) => void,
  ) {
    this.name = spec.fn;
    if (db === null) return;
    db.function(spec.fn, { deterministic: false, varargs: true }, (...groups: unknown[]) => {
      for (const g of groups) {
        if (typeof g !== 'string') continue;
        this.drop(g);
        onTouch?.(spec.fn, g);
      }
      this.stats.touches += 1;
      return null;
    });
    const trigger = (table: string, event: 'INSERT' | 'UPDATE' | 'DELETE'): string => {
      // An UPDATE may move a row to another group: both are touched.
      const groups = event === 'INSERT' ? [spec.group('NEW')] : event === 'DELETE' ? [spec.group('OLD')] : [spec.group('NEW'), spec.group('OLD')];
      return `CREATE TEMP TRIGGER IF NOT EXISTS ${spec.fn}_${table}_${event.toLowerCase()} AFTER ${event} ON main.${table}
        BEGIN SELECT ${spec.fn}(${groups.join(', ')}); END;`;
    };
    db.exec(spec.tables.flatMap((t) => (['INSERT', 'UPDATE', 'DELETE'] as const).map((e) => trigger(t, e))).join('\n'));
  }

  /** The answer cached for (group, key), or `read()`'s, kept. */
  get(group: string, key: string, read: () => V): V {
    let answers = this.groups.get(group);
    if (answers !== undefined && answers.has(key)) {
      this.stats.hits += 1;
      return answers.get(key)!;
    }
    this.stats.misses += 1;
    const answer = read();
    if (answers === undefined) {
      answers = new Map();
      this.groups.set(group, answers);
    } else if (answers.size >= this.maxPerGroup) {
      this.answers -= answers.size;
      answers.clear();
    }
    answers.set(key, answer);
    this.answers += 1;
    // Over the bound: the groups cached first go (never the one just kept).
    while (this.answers > this.maxAnswers) {
      const oldest = this.groups.keys().next().value!;
      if (oldest === group) break;
      this.drop(oldest);
    }
    return answer;
  }

  /** Answers held. */
  get size(): number {
    return this.answers;
  }

  /** Drops a group's answers: a row of it changed on the writer's connection (another thread). */
  touch(group: string): void {
    this.drop(group);
    this.stats.touches += 1;
  }

  private drop(group: string): void {
    const answers = this.groups.get(group);
    if (answers === undefined) return;
    this.answers -= answers.size;
    this.groups.delete(group);
  }
}
