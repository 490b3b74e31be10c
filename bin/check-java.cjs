#!/usr/bin/env node
'use strict';
/**
 * `npm test`'s pretest: the DynamoDB Local tests (the contract suites on a third engine) run the official jar, which
 * needs Java 17 or later. Without it, one message here instead of every one of those tests failing on its own.
 * SLUICE_JAVA names another java command (default: `java` on PATH).
 */
const { spawnSync } = require('node:child_process');

const java = process.env.SLUICE_JAVA || 'java';
const INSTALL = 'install a JDK or JRE 17+ (Debian/Ubuntu: sudo apt-get install openjdk-17-jre-headless), then run npm test again';
const result = spawnSync(java, ['-version'], { encoding: 'utf8', timeout: 15_000 });
let problem;
if (result.error) problem = result.error.code === 'ENOENT' ? `\`${java}\` was not found${java.includes('/') ? '' : ' on PATH'}` : `\`${java} -version\` failed: ${result.error.message}`;
else {
  const text = `${result.stderr}${result.stdout}`;
  // `openjdk version "17.0.15" 2025-04-15`, `java version "1.8.0_381"`, `openjdk version "21" 2023-09-19`
  const match = /version "(\d+)(?:\.(\d+))?/.exec(text);
  const major = match ? (match[1] === '1' ? Number(match[2]) : Number(match[1])) : undefined;
  if (result.status !== 0) problem = `\`${java} -version\` exited with ${result.status}`;
  else if (major !== undefined && major < 17) problem = `found Java ${major}`;
}
if (problem) {
  process.stderr.write(`npm test: the DynamoDB Local tests need Java 17 or later, and ${problem}: ${INSTALL}.\n`);
  process.exit(1);
}
