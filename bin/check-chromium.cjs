#!/usr/bin/env node
'use strict';
/**
 * `npm test`'s pretest, with bin/check-java.cjs: the dashboard test drives a real Chromium (test/support/browser.ts),
 * the system's. Without one, one message here instead of that test failing on its own. SLUICE_CHROMIUM names another
 * Chromium or Chrome binary (default: Debian's and Ubuntu's /usr/bin/chromium, /usr/bin/chromium-browser).
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');

const SYSTEM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];
const INSTALL = 'install Chromium (Debian/Ubuntu: sudo apt-get install chromium) or set SLUICE_CHROMIUM to a Chromium or Chrome binary';

/** The Chromium to drive, or why there is none. */
function findChromium(env = process.env) {
  const named = env.SLUICE_CHROMIUM;
  const file = named || SYSTEM.find((candidate) => fs.existsSync(candidate));
  if (!file) return { problem: `none of ${SYSTEM.join(', ')} exists`, install: INSTALL };
  if (!fs.existsSync(file)) return { problem: `SLUICE_CHROMIUM=${named}: no such file`, install: INSTALL };
  const result = spawnSync(file, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  // `Chromium 156.0.8078.108 built on Debian ...`, `Google Chrome 147.0.7727.55`
  if (result.error || result.status !== 0 || !/(Chromium|Chrome)\S* \d+\./.test(result.stdout)) {
    const why = result.error
      ? result.error.message
      : `it printed ${JSON.stringify(result.stdout.trim().slice(0, 80))}, exit ${result.status}`;
    return { problem: `\`${file} --version\` does not answer as Chromium does (${why})`, install: INSTALL };
  }
  return { path: file };
}

module.exports = { findChromium };

if (require.main === module) {
  const found = findChromium();
  if (found.problem) {
    process.stderr.write(`npm test: the dashboard test needs Chromium, and ${found.problem}: ${found.install}.\n`);
    process.exit(1);
  }
}
