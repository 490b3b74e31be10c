import chromium from '@sparticuz/chromium';
import { type Browser, chromium as playwright } from 'playwright-core';

/**
 * Flags that switch off the browser's own protections: the same-origin policy and CORS (--disable-web-security), the
 * block on http content in https pages, site isolation. @sparticuz/chromium's defaults carry them (a Lambda renderer
 * has no use for them); a test of what another origin can do must run without them.
 */
const WEAKENING_FLAGS = new Set(['--disable-web-security', '--allow-running-insecure-content', '--disable-site-isolation-trials']);

/** The launch flags with those that weaken web security left out. */
export function withWebSecurity(args: readonly string[]): string[] {
  return args.filter((arg) => !WEAKENING_FLAGS.has(arg.split('=')[0]!));
}

/**
 * A headless Chromium for the dashboard test. The binary comes inside the npm package @sparticuz/chromium (a
 * brotli-packed Chromium built for Lambda, linked only against glibc and expat; unpacked to the temp folder on first
 * use, about 2 s), so `npm ci` installs everything: no apt step, no browser download, nothing outside the npm registry.
 * SLUICE_CHROMIUM names another binary (e.g. Debian's /usr/bin/chromium). Playwright drives it over CDP. Web security
 * is on (withWebSecurity). `extraArgs`: more flags (e.g. --host-resolver-rules).
 */
export async function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  const executablePath = process.env.SLUICE_CHROMIUM || (await chromium.executablePath());
  return playwright.launch({
    executablePath,
    headless: true,
    // The package's flags (single process, no GPU), and nothing that reaches out to the network on its own.
    args: withWebSecurity([
      ...chromium.args,
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      ...extraArgs,
    ]),
  });
}
