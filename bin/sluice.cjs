#!/usr/bin/env node
'use strict';
// The `sluice` command (package.json "bin"). It runs the TypeScript sources through tsx, a devDependency: meant for a
// checkout of this repository after `npm ci`. `sluice --help` lists the commands.
require('tsx/cjs');
require('../shared/cli/main.ts').run();
