// Shared by the browser tests: the real server binary on a free port with a
// temporary SQLite file, and Debian's Chromium driven by playwright-core.

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const WEB_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO = join(WEB_DIR, '..');
export const ARTIFACTS = join(WEB_DIR, 'test-artifacts');
export const SHARED = process.env.SANGUO_SHARED || join(REPO, '..', 'shared');
const BIN = process.env.SANGUO_BIN || join(REPO, 'target', 'release', 'sanguo');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

mkdirSync(ARTIFACTS, { recursive: true });

/** Builds the server unless SANGUO_SKIP_BUILD=1 (cargo is quick when nothing changed). */
let built = false;
export function buildServer() {
  if (built || (process.env.SANGUO_SKIP_BUILD === '1' && existsSync(BIN))) return;
  built = true;
  const r = spawnSync('cargo', ['build', '--release', '-p', 'server'], { cwd: REPO, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('cargo build --release -p server failed');
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Starts `sanguo serve`; resolves to {url, stop()}. */
export async function startServer(extraArgs = [], { port: fixedPort, dir: fixedDir } = {}) {
  buildServer();
  const port = fixedPort || (await freePort());
  const dir = fixedDir || mkdtempSync(join(tmpdir(), 'sanguo-web-'));
  const proc = spawn(BIN, ['serve', '--listen', `127.0.0.1:${port}`, '--sqlite', join(dir, 'test.sqlite'), ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG || 'warn' },
  });
  let log = '';
  proc.stdout.on('data', (d) => (log += d));
  proc.stderr.on('data', (d) => (log += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited: ${log}`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.ok) break;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`server did not start: ${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    dir,
    log: () => log,
    /** Stops the server; `keep` leaves its database for a restart. */
    async stop({ keep = false } = {}) {
      proc.kill('SIGTERM');
      await new Promise((r) => (proc.exitCode !== null ? r() : proc.once('exit', r)));
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function launchBrowser() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
  });
}

/** A new context + page that reports page errors into `errors`. */
export async function newPage(browser, { lang = 'en-US', viewport = { width: 1280, height: 900 }, ...opts } = {}, errors = []) {
  const ctx = await browser.newContext({ locale: lang, viewport, ...opts });
  const page = await ctx.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  return { ctx, page };
}

export function shot(page, name, selector = '#board') {
  return page.locator(selector).screenshot({ path: join(ARTIFACTS, name) });
}
