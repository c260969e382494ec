/** `npm run docs:api`: writes docs/reference.md from schema/openapi.json (src/api/reference.ts). */
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../config/paths.ts';
import { renderReference } from './reference.ts';

export const REFERENCE_FILE = path.join(PROJECT_ROOT, 'docs/reference.md');
const doc = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'schema/openapi.json'), 'utf8')) as Record<string, unknown>;
fs.writeFileSync(REFERENCE_FILE, renderReference(doc));
console.log(`wrote ${path.relative(process.cwd(), REFERENCE_FILE)}`);
