import { type Browser, chromium as playwright } from 'playwright-core';

// The same search as `npm test`'s pretest (SLUICE_CHROMIUM, else the system's Chromium).
const { findChromium } = require('../../bin/check-chromium.cjs') as {
  findChromium(): { path?: string; problem?: string; install?: string };
};

/**
 * A headless Chromium for the dashboard test, the system's (Debian's `chromium`, or SLUICE_CHROMIUM), driven by
 * Playwright over CDP, with web security on (same-origin policy, site isolation). Its flags only keep it from reaching
 * out to the network on its own, which this project's machines refuse, and turn the sandbox off: the tests run as root
 * on CI, where Chromium's sandbox does not start.
 */
export async function launchChromium(): Promise<Browser> {
  const found = findChromium();
  if (!found.path) throw new Error(`the dashboard test needs Chromium, and ${found.problem}: ${found.install}`);
  return playwright.launch({
    executablePath: found.path,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--no-default-browser-check',
    ],
  });
}
