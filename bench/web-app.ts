/**
 * The `web` scenario: how light and fast the web app is. The bundle: bytes of script and style
 * as built (raw, gzip, brotli: what the node sends). First page on loopback, in Debian's
 * Chromium with an empty cache each time (a fresh browser context): from navigation start to
 * the sign-in button (signed out), and to the conversation list (signed in, the session in the
 * tab), medians of BENCH_ROUNDS x 5 loads. Goals (issue 15): under 100 kB of script (as sent,
 * brotli) and under 1 s to the first page.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureWebBuild, launchChromium, signIn } from '../test/helpers/browser.ts';
import { startTestNode } from '../test/helpers/processes.ts';
import { REPO_ROOT } from './lib/processes.ts';
import { goal, type Scenario } from './lib/scenario.ts';

function bundle() {
  const dir = path.join(REPO_ROOT, 'dist/web/assets');
  const sum = (ext: string, suffix = '') =>
    fs.readdirSync(dir).filter((f) => f.endsWith(`${ext}${suffix}`)).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
  return {
    script_bytes: sum('.js'),
    script_gzip_bytes: sum('.js', '.gz'),
    script_brotli_bytes: sum('.js', '.br'),
    style_bytes: sum('.css'),
    style_brotli_bytes: sum('.css', '.br'),
  };
}

const median = (xs: number[]): number => {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

export const scenario: Scenario = {
  name: 'web',
  description: 'web app bundle size and first-page time on loopback in Chromium (cold cache)',
  async run(settings, log) {
    log('building the web app');
    await ensureWebBuild();
    const sizes = bundle();
    const node = await startTestNode();
    const browser = await launchChromium();
    const signedOut: number[] = [];
    const signedIn: number[] = [];
    try {
      // One signed-in tab whose session is copied into each fresh context.
      const seed = await (await browser.newContext()).newPage();
      await signIn(seed, node.origin, /Bob Baker/);
      const session = await seed.evaluate("sessionStorage.getItem('chat.session')") as string;
      for (let i = 0; i < settings.rounds * 5; i++) {
        const a = await (await browser.newContext()).newPage();
        let t = Date.now();
        await a.goto(`${node.origin}/app/`);
        await a.getByRole('button', { name: 'Sign in' }).waitFor();
        signedOut.push(Date.now() - t);
        await a.context().close();

        const ctx = await browser.newContext();
        await ctx.addInitScript(`sessionStorage.getItem('chat.session') || sessionStorage.setItem('chat.session', ${JSON.stringify(session)})`);
        const b = await ctx.newPage();
        t = Date.now();
        await b.goto(`${node.origin}/app/#/t/acme/support`);
        await b.getByRole('list', { name: 'Your conversations' }).waitFor();
        signedIn.push(Date.now() - t);
        await ctx.close();
      }
    } finally {
      await browser.close();
      await node.stop();
    }
    const firstPage = { first_page_signed_out_ms: median(signedOut), first_page_signed_in_ms: median(signedIn) };
    const figures: Record<string, number> = Object.assign({}, sizes, firstPage);
    log(`signed out: ${signedOut.join(', ')} ms; signed in: ${signedIn.join(', ')} ms`);
    return {
      measurements: [],
      figures,
      goals: [goal('script_brotli_bytes', sizes.script_brotli_bytes, '<=', 100_000), goal('first_page_signed_in_ms', firstPage.first_page_signed_in_ms, '<=', 1000)],
      notes: ['cold cache: a fresh browser context per load; the signed-in load includes /me, tenants, applications, capabilities, the conversation list and the realtime stream opening'],
    };
  },
};
