import { type Browser, chromium as playwright } from 'playwright-core';

// The same search as `npm test`'s pretest (SLUICE_CHROMIUM, else the system's Chromium).
const { findChromium } = require('../../bin/check-chromium.cjs') as {
  findChromium(): { path?: string; problem?: string; install?: string };
};

/**
 * Flags that switch off the browser's own protections: the same-origin policy and CORS (--disable-web-security), the
 * block on http content in https pages, site isolation. A test of what another origin can do must run without them.
 */
const WEAKENING_FLAGS = new Set(['--disable-web-security', '--allow-running-insecure-content', '--disable-site-isolation-trials']);

/** The launch flags with those that weaken web security left out. */
export function withWebSecurity(args: readonly string[]): string[] {
  return args.filter((arg) => !WEAKENING_FLAGS.has(arg.split('=')[0]!));
}

/**
 * A headless Chromium for the browser tests, the system's (Debian's `chromium`, or SLUICE_CHROMIUM), driven by
 * Playwright over CDP, with web security on (same-origin policy, site isolation). Its flags only keep it from reaching
 * out to the network on its own, which this project's machines refuse, and turn the sandbox off: the tests run as root
 * on CI, where Chromium's sandbox does not start. `extraArgs`: more flags (e.g. --host-resolver-rules).
 */
export async function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  const found = findChromium();
  if (!found.path) throw new Error(`the browser tests need Chromium, and ${found.problem}: ${found.install}`);
  return playwright.launch({
    executablePath: found.path,
    headless: true,
    args: withWebSecurity([
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--no-default-browser-check',
      ...extraArgs,
    ]),
  });
}
