// Jest loads each test file's modules anew, but node:async_hooks is the worker's own: an AsyncLocalStorage stays on
// Node's list of enabled storages until disabled, and every promise made in the worker visits each one on the list
// (async_hooks' _propagate). Jest's runner makes one per test file (jest-circus's test execution context) and never
// disables it, nor do the local Lambda runtime and Powertools theirs: a worker's fortieth file made each promise pay
// for forty storages (measured: 200,000 awaits take 45 ms beside one storage, 1.5 s beside fifty). So the storages a
// file used are disabled once it is done: ours after its tests, Jest's (still running the file's hooks then) as the
// next file in the worker begins.
const { AsyncLocalStorage } = require('node:async_hooks');

const SEEN = Symbol.for('sluice.test.asyncStorages');
const proto = AsyncLocalStorage.prototype;
if (!proto[SEEN]) {
  const seen = { ours: new Set(), jests: new Set() };
  Object.defineProperty(proto, SEEN, { value: seen });
  for (const method of ['run', 'enterWith']) {
    const original = proto[method];
    proto[method] = function (...args) {
      if (!seen.ours.has(this) && !seen.jests.has(this)) (new Error().stack.includes('jest-circus') ? seen.jests : seen.ours).add(this);
      return original.apply(this, args);
    };
  }
}

const seen = proto[SEEN];
// This file's own runner storage is not on the list yet (it is first used after this setup file): the ones there are
// earlier files'.
for (const storage of seen.jests) storage.disable();
seen.jests.clear();

afterAll(() => {
  for (const storage of seen.ours) storage.disable();
  seen.ours.clear();
});
