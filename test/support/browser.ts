import chromium from '@sparticuz/chromium';
import { type Browser, chromium as playwright } from 'playwright-core';

/**
 * A headless Chromium for the dashboard test. The binary comes inside the npm package @sparticuz/chromium (a
 * brotli-packed Chromium built for Lambda, linked only against glibc and expat; unpacked to the temp folder on first
 * use, about 2 s), so `npm ci` installs everything: no apt step, no browser download, nothing outside the npm registry.
 * SLUICE_CHROMIUM names another binary (e.g. Debian's /usr/bin/chromium). Playwright drives it over CDP.
 */
export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.SLUICE_CHROMIUM || (await chromium.executablePath());
  return playwright.launch({
    executablePath,
    headless: true,
    // The package's flags (single process, no GPU), and nothing that reaches out to the network on its own.
    args: [
      ...chromium.args,
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
