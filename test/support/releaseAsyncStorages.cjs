// Jest loads each test file's modules anew, but node:async_hooks is the worker's own: an AsyncLocalStorage stays on
// Node's list of enabled storages until disabled, and every promise made in the worker visits each one on the list
// (async_hooks' _propagate). Jest's runner makes one per test file (jest-circus's test execution context) and never
// disables it, nor do the local Lambda runtime and Powertools theirs: a worker's fortieth file made each promise pay
// for forty storages (measured: 200,000 awaits take 45 ms beside one storage, 1.5 s beside fifty). So the storages a
// file used are disabled as the next file in its worker begins, when nothing of that file runs any more (not in its
// own afterAll: its stack's teardown, after it, still needs them).
const { AsyncLocalStorage } = require('node:async_hooks');

const SEEN = Symbol.for('sluice.test.asyncStorages');
const proto = AsyncLocalStorage.prototype;
if (!proto[SEEN]) {
  const seen = new Set();
  Object.defineProperty(proto, SEEN, { value: seen });
  for (const method of ['run', 'enterWith']) {
    const original = proto[method];
    proto[method] = function (...args) {
      seen.add(this);
      return original.apply(this, args);
    };
  }
}

// This file's own storages are first used after this setup file runs: the ones here are earlier files'.
for (const storage of proto[SEEN]) storage.disable();
proto[SEEN].clear();
