#!/usr/bin/env node
'use strict';
/**
 * `npm run package [-- --stage NAME]`: `serverless package` (osls, with esbuild bundling each function:
 * bin/serverless/bundle.cjs), fully offline. Writes .serverless/cloudformation-template-update-stack.json, one zip per
 * function and, beside each, esbuild's record of what went into its bundle (<function>.meta.json). Packaging calls no
 * AWS API, so the credentials are dummies on purpose: whatever profile or keys the shell holds are never used, and
 * nothing is downloaded (telemetry and notifications off). The stage defaults to `dev`.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
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

// One packaging at a time per checkout: each empties and fills .serverless, in the repository, so two at once (two test
// files, or a test and you) would take each other's files. A lock left by a process that is gone is taken over.
const lock = path.join(root, '.package.lock');
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
};
for (;;) {
  try {
    fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
    break;
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
    let owner;
    try {
      owner = Number(fs.readFileSync(lock, 'utf8') || 0);
    } catch (readError) {
      if (readError.code === 'ENOENT') continue; // its owner just finished: try to take it again
      throw readError;
    }
    if (owner && !alive(owner)) fs.rmSync(lock, { force: true });
    else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200); // another packaging runs: wait for it
  }
}
let result;
try {
  result = spawnSync(process.execPath, [path.join(root, 'node_modules/osls/bin/serverless.js'), 'package', ...args], {
    cwd: root,
    env,
    stdio: 'inherit',
  });
} finally {
  fs.rmSync(lock, { force: true });
}
if (result.error) {
  console.error(result.error.message);
  process.exit(1);
}
process.exit(result.status ?? 1);
