/**
 * Browser tests: Debian's Chromium driven by playwright-core (no browser download), the web app
 * built once per source state, sign-in as a person does it, screenshots kept in .tmp/screenshots.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = path.join(ROOT, '.tmp/screenshots');
const WEB_OUT = path.join(ROOT, 'dist/web');
const STAMP = path.join(WEB_OUT, '.source-hash');

function sourceHash(): string {
  const h = createHash('sha256');
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else h.update(p).update(fs.readFileSync(p));
    }
  };
  walk(path.join(ROOT, 'web'));
  walk(path.join(ROOT, 'client'));
  return h.digest('hex');
}

/** Builds the web app into dist/web unless the build there is of these very sources (a lock keeps parallel test files from building twice). */
export async function ensureWebBuild(): Promise<void> {
  const want = sourceHash();
  const lock = path.join(ROOT, '.tmp/web-build.lock');
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  for (;;) {
    if (fs.existsSync(STAMP) && fs.readFileSync(STAMP, 'utf8') === want) return;
    try {
      fs.mkdirSync(lock);
    } catch {
      // Another test file is building; a lock older than 2 minutes is from a killed run.
      if (Date.now() - fs.statSync(lock, { throwIfNoEntry: false })!.mtimeMs > 120_000) fs.rmSync(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    try {
      if (fs.existsSync(STAMP) && fs.readFileSync(STAMP, 'utf8') === want) return;
      execFileSync(process.execPath, [path.join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '-c', 'web/vite.config.ts', '--logLevel', 'warn'], { cwd: ROOT, stdio: 'inherit' });
      fs.writeFileSync(STAMP, want);
      return;
    } finally {
      fs.rmSync(lock, { recursive: true, force: true });
    }
  }
}

export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`browser tests need Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
}

/** Signs in through the app's button and the development IdP's login page, as a person would. */
export async function signIn(page: Page, origin: string, userName: RegExp): Promise<void> {
  await page.goto(`${origin}/app/`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: userName }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}
