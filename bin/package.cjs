#!/usr/bin/env node
'use strict';
/**
 * `npm run package [-- --stage NAME]`: `serverless package` (osls + serverless-esbuild), fully offline. Writes
 * .serverless/cloudformation-template-update-stack.json and one zip per function. Packaging calls no AWS API, so the
 * credentials are dummies on purpose: whatever profile or keys the shell holds are never used, and nothing is
 * downloaded (telemetry and notifications off). The stage defaults to `dev`.
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
if (!args.some((a) => a === '--stage' || a.startsWith('--stage=') || a === '-s')) args.push('--stage', 'dev');

const env = {
  ...process.env,
  AWS_ACCESS_KEY_ID: 'offline-package',
  AWS_SECRET_ACCESS_KEY: 'offline-package',
  SLS_TELEMETRY_DISABLED: '1',
  SLS_NOTIFICATIONS_MODE: 'off',
};
for (const name of ['AWS_PROFILE', 'AWS_SESSION_TOKEN', 'AWS_DEFAULT_PROFILE']) delete env[name];

const result = spawnSync(process.execPath, [path.join(root, 'node_modules/osls/bin/serverless.js'), 'package', ...args], {
  cwd: root,
  env,
  stdio: 'inherit',
});
if (result.error) {
  console.error(result.error.message);
  process.exit(1);
}
process.exit(result.status ?? 1);
