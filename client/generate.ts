/**
 * Writes client/openapi.d.ts from schema/openapi.json (openapi-typescript). `npm run client`;
 * test/client.test.ts fails when the checked-in file differs from what this produces.
 */
import fs from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';

const ROOT = path.resolve(import.meta.dirname, '..');
export const SCHEMA_FILE = path.join(ROOT, 'schema/openapi.json');
export const TYPES_FILE = path.join(ROOT, 'client/openapi.d.ts');

const HEADER = '// Generated from schema/openapi.json by `npm run client` (client/generate.ts). Do not edit.\n\n';

export async function generatedTypes(): Promise<string> {
  const doc = JSON.parse(fs.readFileSync(SCHEMA_FILE, 'utf8')) as Parameters<typeof openapiTS>[0];
  const ast = await openapiTS(doc, { alphabetize: false, exportType: false });
  return HEADER + astToString(ast);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  fs.writeFileSync(TYPES_FILE, await generatedTypes());
  process.stdout.write(`wrote ${path.relative(ROOT, TYPES_FILE)}\n`);
}
