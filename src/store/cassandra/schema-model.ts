/**
 * A small model of schema/cassandra/*.cql and of the statements the driver prepares, enough to
 * check them without a server (test/store/cassandra-statements.test.ts) and to apply the schema
 * (migrations.ts). It understands the subset of CQL this driver writes, not CQL in general:
 * CREATE TABLE with a PRIMARY KEY clause and CLUSTERING ORDER; SELECT/INSERT/UPDATE/DELETE with
 * `col = ?`, `col IN ?`, range operators, `(a, b) < (?, ?)`, LIMIT, IF, USING TTL/TIMESTAMP.
 */

export interface TableModel {
  name: string;
  columns: Map<string, string>;
  partitionKey: string[];
  clustering: string[];
  /** Per clustering column: 'ASC' or 'DESC'. */
  order: Map<string, 'ASC' | 'DESC'>;
}

/** Statements of a .cql file: `--` comments dropped, split on `;`. */
export function splitStatements(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(/--.*$/, ''))
    .join('\n')
    .split(';')
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => s.length > 0);
}

function splitTop(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of list) {
    if (ch === '(') depth += 1;
    if (ch === ')') depth -= 1;
    if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

const names = (s: string): string[] => s.replace(/[()]/g, ' ').split(',').map((x) => x.trim()).filter(Boolean);

/** The text inside the parenthesis opening at `open`, and what follows its closing one. */
function balanced(text: string, open: number): { inside: string; after: string } {
  let depth = 0;
  for (let i = open; i < text.length; i += 1) {
    if (text[i] === '(') depth += 1;
    if (text[i] === ')' && --depth === 0) return { inside: text.slice(open + 1, i), after: text.slice(i + 1) };
  }
  throw new Error(`unbalanced parentheses: ${text.slice(0, 60)}`);
}

export function parseTable(stmt: string): TableModel {
  const m = /^CREATE TABLE (?:IF NOT EXISTS )?(\w+) \(/i.exec(stmt);
  if (!m) throw new Error(`not a CREATE TABLE: ${stmt.slice(0, 60)}`);
  const body = balanced(stmt, m[0].length - 1);
  const table: TableModel = { name: m[1]!, columns: new Map(), partitionKey: [], clustering: [], order: new Map() };
  for (const part of splitTop(body.inside)) {
    const pk = /^PRIMARY KEY \((.*)\)$/i.exec(part);
    if (pk) {
      const [first, ...rest] = splitTop(pk[1]!);
      table.partitionKey = names(first!);
      table.clustering = rest;
      continue;
    }
    const [col, type, ...flags] = part.split(' ');
    table.columns.set(col!, type!);
    if (flags.join(' ').toUpperCase() === 'PRIMARY KEY') table.partitionKey = [col!];
  }
  for (const c of table.clustering) table.order.set(c, 'ASC');
  const order = /CLUSTERING ORDER BY \((.*?)\)/i.exec(body.after);
  for (const item of order ? splitTop(order[1]!) : []) {
    const [col, dir] = item.split(' ');
    table.order.set(col!, (dir ?? 'ASC').toUpperCase() as 'ASC' | 'DESC');
  }
  return table;
}

/** `ALTER TABLE t ADD [IF NOT EXISTS] (c type, ...)` (or one `c type`) applied to its table. */
function applyAlter(tables: Map<string, TableModel>, stmt: string): void {
  const m = /^ALTER TABLE (?:IF EXISTS )?(\w+) ADD (?:IF NOT EXISTS )?\(?(.*?)\)?$/i.exec(stmt);
  if (!m) throw new Error(`not an ALTER TABLE ... ADD: ${stmt.slice(0, 60)}`);
  const table = tables.get(m[1]!);
  if (!table) throw new Error(`ALTER TABLE of an unknown table: ${m[1]}`);
  for (const part of splitTop(m[2]!)) {
    const [col, type] = part.split(' ');
    table.columns.set(col!, type!);
  }
}

/** The tables of one or more schema files' text, in order (CREATE TABLE, then ALTER TABLE ... ADD). */
export function parseSchema(text: string): Map<string, TableModel> {
  const tables = new Map<string, TableModel>();
  for (const s of splitStatements(text)) {
    if (/^CREATE TABLE/i.test(s)) tables.set(parseTable(s).name, parseTable(s));
    else if (/^ALTER TABLE/i.test(s)) applyAlter(tables, s);
  }
  return tables;
}

export interface Restriction {
  columns: string[];
  op: string;
}

export interface StatementModel {
  kind: 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE';
  table: string;
  /** Every column the statement names (selected, inserted, set, restricted, conditioned). */
  columns: string[];
  where: Restriction[];
  conditions: Restriction[];
  /** IF NOT EXISTS / IF EXISTS / IF <conditions>. */
  lwt: 'none' | 'not-exists' | 'exists' | 'conditions';
  markers: number;
  hasLimit: boolean;
}

/** Bind markers outside string literals. */
export function countMarkers(stmt: string): number {
  return stmt.replace(/'[^']*'/g, "''").split('?').length - 1;
}

function restrictions(clause: string | undefined): Restriction[] {
  if (!clause) return [];
  return clause.split(/ AND /i).map((cond) => {
    const m = /^(\([^)]*\)|\w+) (=|<=|>=|<|>|!=|IN) /i.exec(`${cond.trim()} `);
    if (!m) throw new Error(`cannot read condition: ${cond}`);
    return { columns: names(m[1]!), op: m[2]!.toUpperCase() };
  });
}

export function parseStatement(stmt: string): StatementModel {
  const s = stmt.replace(/\s+/g, ' ').trim();
  if (/ALLOW FILTERING/i.test(s)) throw new Error(`ALLOW FILTERING: ${s}`);
  let m: RegExpExecArray | null;
  const base = { markers: countMarkers(s), hasLimit: / LIMIT \?$/i.test(s) };
  const none: Restriction[] = [];
  if ((m = /^SELECT (.+?) FROM (\w+) WHERE (.+?)(?: LIMIT \?)?$/i.exec(s))) {
    const where = restrictions(m[3]);
    return { kind: 'SELECT', table: m[2]!, where, columns: [...names(m[1]!), ...where.flatMap((r) => r.columns)], conditions: none, lwt: 'none', ...base };
  }
  if ((m = /^INSERT INTO (\w+) \(([^)]*)\) VALUES \(.*?\)( IF NOT EXISTS)?(?: USING (?:TTL|TIMESTAMP) \?)?$/i.exec(s))) {
    return { kind: 'INSERT', table: m[1]!, where: [], columns: names(m[2]!), conditions: none, lwt: m[3] ? 'not-exists' : 'none', ...base };
  }
  if ((m = /^UPDATE (\w+)(?: USING (?:TTL|TIMESTAMP) \?)? SET (.+?) WHERE (.+?)(?: IF (.+))?$/i.exec(s))) {
    const where = restrictions(m[3]);
    const conditions = restrictions(m[4]);
    const set = splitTop(m[2]!).map((a) => a.split('=')[0]!.trim());
    return { kind: 'UPDATE', table: m[1]!, where, conditions, lwt: m[4] ? 'conditions' : 'none', columns: [...set, ...where.flatMap((r) => r.columns), ...conditions.flatMap((r) => r.columns)], ...base };
  }
  if ((m = /^DELETE FROM (\w+) WHERE (.+?)(?: IF (EXISTS|.+))?$/i.exec(s))) {
    const where = restrictions(m[2]);
    const lwt = m[3] === undefined ? 'none' : m[3].toUpperCase() === 'EXISTS' ? 'exists' : 'conditions';
    const conditions = lwt === 'conditions' ? restrictions(m[3]) : [];
    return { kind: 'DELETE', table: m[1]!, where, conditions, lwt, columns: [...where.flatMap((r) => r.columns), ...conditions.flatMap((r) => r.columns)], ...base };
  }
  throw new Error(`statement not understood: ${s}`);
}

/**
 * What Cassandra would refuse, or only run with ALLOW FILTERING or a scan, for this statement
 * against the schema; an empty list when it is a keyed query. Checks: the table and every column
 * exist; the whole partition key is restricted by equality (IN only on the last clustering
 * column); no regular column in WHERE; clustering restrictions form a prefix with at most the
 * last one a range; UPDATE names the full primary key; INSERT supplies the primary key; IF
 * conditions only on regular columns.
 */
export function problems(stmt: StatementModel, tables: ReadonlyMap<string, TableModel>): string[] {
  const t = tables.get(stmt.table);
  if (!t) return [`unknown table ${stmt.table}`];
  const out: string[] = [];
  for (const c of stmt.columns) if (!t.columns.has(c)) out.push(`unknown column ${t.name}.${c}`);
  const pk = new Set([...t.partitionKey, ...t.clustering]);
  if (stmt.kind === 'INSERT') {
    for (const c of pk) if (!stmt.columns.includes(c)) out.push(`INSERT lacks key column ${c}`);
    return out;
  }
  const eq = new Set(stmt.where.filter((r) => r.op === '=' && r.columns.length === 1).map((r) => r.columns[0]!));
  for (const c of t.partitionKey) if (!eq.has(c)) out.push(`partition key column ${c} not restricted by =`);
  for (const r of stmt.where) {
    for (const c of r.columns) if (!pk.has(c)) out.push(`WHERE on regular column ${c} (needs ALLOW FILTERING)`);
  }
  // Clustering: equalities on a prefix, then at most one range (or IN) on the next column(s).
  let i = 0;
  while (i < t.clustering.length && eq.has(t.clustering[i]!)) i += 1;
  const rest = stmt.where.filter((r) => r.columns.some((c) => t.clustering.indexOf(c) >= i));
  for (const r of rest) {
    const idx = r.columns.map((c) => t.clustering.indexOf(c));
    if (idx[0] !== i || idx.some((x, k) => x !== i + k)) out.push(`clustering restriction on ${r.columns.join(', ')} skips a preceding column`);
  }
  if (stmt.kind === 'UPDATE') for (const c of pk) if (!eq.has(c)) out.push(`UPDATE must name the full primary key (${c})`);
  for (const r of stmt.conditions) for (const c of r.columns) if (pk.has(c)) out.push(`IF condition on key column ${c}`);
  return out;
}
