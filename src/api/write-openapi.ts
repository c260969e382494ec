/** `npm run openapi`: writes schema/openapi.json from the route table. */
import fs from 'node:fs';
import path from 'node:path';
import { openApiText } from './openapi.ts';
import { ROUTES } from './routes/index.ts';

export const OPENAPI_FILE = path.resolve(import.meta.dirname, '../../schema/openapi.json');

fs.writeFileSync(OPENAPI_FILE, openApiText(ROUTES));
console.log(`wrote ${path.relative(process.cwd(), OPENAPI_FILE)}`);
