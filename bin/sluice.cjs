#!/usr/bin/env node
'use strict';
// The `sluice` command (package.json "bin"). It runs the TypeScript sources through tsx, a devDependency: meant for a
// checkout of this repository after `npm ci`. `sluice --help` lists the commands.

// On Node 20 the AWS SDK prints an 8-line notice on every command that its releases after January 2027 need Node 22.
// The lock file pins releases that run on Node 20, so it is noise here (see README, "Node versions");
// SLUICE_SDK_NODE_WARNING=1 lets it through.
if (!process.env.SLUICE_SDK_NODE_WARNING) process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// Both of tsx's hooks: CommonJS for the sources `require` loads, ESM for the `import()` each kind's starter (its SDK
// adapter) is loaded by on first use. (tsx/esm/api's CommonJS build resolves its hook file wrongly, so it is imported.)
require('tsx/cjs');
import('tsx/esm/api').then(
  ({ register }) => {
    register();
    require('../shared/cli/main.ts').run();
  },
  (error) => {
    process.stderr.write(`sluice: cannot load tsx (run npm ci in this checkout): ${error.message}\n`);
    process.exitCode = 1;
  },
);
