/**
 * Request validation with ajv, compiled once per route from the route table's JSON Schemas.
 * Every problem is reported (allErrors) as one line in the error's `message` array; a field the
 * route does not accept is `invalid_request` like any other problem.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { ApiError } from '../errors/catalog.ts';

// ajv-formats ships CommonJS with `exports.default`; under ESM the callable is one level down.
const addFormats = ((addFormatsPlugin as unknown as { default?: typeof addFormatsPlugin }).default ?? addFormatsPlugin) as unknown as (ajv: Ajv) => Ajv;

export function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: false, coerceTypes: false, allowUnionTypes: true });
  addFormats(ajv);
  // TypeBox attaches `kind`-like symbol keys only; ajv strict mode must tolerate its annotations.
  ajv.addKeyword({ keyword: 'x-description', schemaType: 'string' });
  return ajv;
}

export type Part = 'path' | 'query' | 'body';

export class Validator {
  private readonly fn: ValidateFunction;
  constructor(ajv: Ajv, schema: TSchema, private readonly part: Part) {
    this.fn = ajv.compile(schema);
  }

  /** Returns the problems, each a readable line; empty when valid. */
  problems(value: unknown): string[] {
    if (this.fn(value)) return [];
    return (this.fn.errors ?? []).map((e) => describe(this.part, e));
  }
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
