/**
 * Request validation with ajv, compiled once per route from the route table's JSON Schemas.
 * Problems are reported as lines of the error's `message` array; a field the route does not
 * accept is `invalid_request` like any other problem.
 *
 * The work and the answer are bounded for any input (a 200 kB body of 25,000 bad array items
 * used to cost over a second of CPU and answer 7 MB):
 *
 *   valid?  ── a validator that stops at the first problem (as cheap as it gets; valid input
 *              takes only this path)
 *   no ──► at most FULL_CHECK_MAX_VALUES JSON values: every problem is found, the first
 *          MAX_LISTED_PROBLEMS are listed and one last line counts the rest
 *      ──► larger: only the first problem, and a line saying that others are not looked for
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { ApiError } from '../errors/catalog.ts';

// ajv-formats ships CommonJS with `exports.default`; under ESM the callable is one level down.
const addFormats = ((addFormatsPlugin as unknown as { default?: typeof addFormatsPlugin }).default ?? addFormatsPlugin) as unknown as (ajv: Ajv) => Ajv;

/** Lines listed per part (path, query, body) at most; the rest are counted in one more line. */
export const MAX_LISTED_PROBLEMS = 20;
/** Inputs with more JSON values (objects, arrays and scalars, each one) get only their first problem. */
export const FULL_CHECK_MAX_VALUES = 256;

/** Two compilers of the same schemas: one stops at the first problem, one finds them all. */
export interface Ajvs {
  first: Ajv;
  all: Ajv;
}

function newAjv(allErrors: boolean): Ajv {
  const ajv = new Ajv({ allErrors, strict: true, useDefaults: false, coerceTypes: false, allowUnionTypes: true });
  addFormats(ajv);
  // TypeBox attaches `kind`-like symbol keys only; ajv strict mode must tolerate its annotations.
  ajv.addKeyword({ keyword: 'x-description', schemaType: 'string' });
  return ajv;
}

export function createAjv(): Ajvs {
  return { first: newAjv(false), all: newAjv(true) };
}

export type Part = 'path' | 'query' | 'body';

export class Validator {
  private readonly first: ValidateFunction;
  /** Compiled at the first invalid input it is needed for: most routes never see one, and compiling costs start-up time. */
  private every: ValidateFunction | null = null;
  constructor(
    private readonly ajv: Ajvs,
    private readonly schema: TSchema,
    private readonly part: Part,
  ) {
    this.first = ajv.first.compile(schema);
  }

  private get all(): ValidateFunction {
    return (this.every ??= this.ajv.all.compile(this.schema));
  }

  /** Returns the problems, each a readable line; empty when valid. Bounded whatever the input. */
  problems(value: unknown): string[] {
    if (this.first(value)) return [];
    if (!withinValues(value, FULL_CHECK_MAX_VALUES)) {
      const firstProblem = this.first.errors?.[0];
      return [
        firstProblem ? describe(this.part, firstProblem) : `${this.part}: is invalid`,
        `${this.part}: other problems are not looked for in a ${this.part} of more than ${FULL_CHECK_MAX_VALUES} values`,
      ];
    }
    const all = this.all;
    all(value);
    const errors = all.errors ?? [];
    const lines = errors.slice(0, MAX_LISTED_PROBLEMS).map((e) => describe(this.part, e));
    if (errors.length > MAX_LISTED_PROBLEMS) lines.push(`${this.part}: ${errors.length - MAX_LISTED_PROBLEMS} more problems not listed`);
    return lines;
  }
}

/** True when `value` holds at most `max` JSON values (itself included); stops counting past it. */
export function withinValues(value: unknown, max: number): boolean {
  let left = max;
  const visit = (v: unknown): boolean => {
    if (--left < 0) return false;
    if (typeof v !== 'object' || v === null) return true;
    if (Array.isArray(v)) {
      for (const item of v) if (!visit(item)) return false;
    } else {
      for (const k in v) if (!visit((v as Record<string, unknown>)[k])) return false;
    }
    return true;
  };
  return visit(value);
}

export function describe(part: Part, e: ErrorObject): string {
  const where = part + (e.instancePath ? e.instancePath.replace(/\//g, '.') : '');
  switch (e.keyword) {
    case 'additionalProperties':
      return `${where}: unknown field "${String(e.params.additionalProperty)}"`;
    case 'required':
      return `${where}: missing required field "${String(e.params.missingProperty)}"`;
    case 'type':
      return part === 'body' && e.instancePath === '' ? 'body: a JSON object is required' : `${where}: must be ${String(e.params.type)}`;
    case 'enum':
      return `${where}: must be one of ${(e.params.allowedValues as unknown[]).map(String).join(', ')}`;
    default:
      return `${where}: ${e.message ?? 'is invalid'}`;
  }
}

/** Throws `invalid_request` listing every problem across path, query and body. */
export function assertValid(problems: string[]): void {
  if (problems.length > 0) throw new ApiError('invalid_request', problems);
}
