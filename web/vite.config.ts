/**
 * The web app's build: Vite (Rolldown) with Preact's JSX runtime, from web/ into dist/web, served
 * by the node under /app/ (src/web/static-app.ts). `npm run build` runs it (postbuild).
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const OUT = fileURLToPath(new URL('../dist/web', import.meta.url));

/** Writes .br and .gz beside each text file of the build, so the node compresses nothing at start. */
function precompress(): Plugin {
  return {
    name: 'chat-precompress',
    apply: 'build',
    closeBundle() {
      const walk = (dir: string): void => {
        for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
          const p = path.join(dir, e.name);
          if (e.isDirectory()) walk(p);
          else if (/\.(js|css|html|svg|json|webmanifest)$/.test(e.name) && fs.statSync(p).size > 512) {
            const body = fs.readFileSync(p);
            fs.writeFileSync(`${p}.br`, zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }));
            fs.writeFileSync(`${p}.gz`, zlib.gzipSync(body, { level: 9 }));
          }
        }
      };
      walk(OUT);
    },
  };
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/app/',
  publicDir: 'public',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  plugins: [precompress()],
  build: {
    outDir: OUT,
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8080', '/idp': 'http://127.0.0.1:8080' } },
});
