/** `npm run openapi`: writes schema/openapi.json from the route table. */
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../config/paths.ts';
import { openApiText } from './openapi.ts';
import { ROUTES } from './routes/index.ts';

export const OPENAPI_FILE = path.join(PROJECT_ROOT, 'schema/openapi.json');

fs.writeFileSync(OPENAPI_FILE, openApiText(ROUTES));
console.log(`wrote ${path.relative(process.cwd(), OPENAPI_FILE)}`);
