'use strict';
/**
 * Jest's TypeScript transform (jest.config.ts): esbuild, already a devDependency for the bundles, strips the types and
 * writes CommonJS for Node, as tsc's settings would (tsconfig.json: ES2022, CommonJS, esModuleInterop). It does not
 * type-check; `tsc --noEmit -p .` does. No test relies on jest.mock hoisting, which it does not do.
 */
const crypto = require('node:crypto');
const { transformSync, version } = require('esbuild');

// `import()` as require() in a promise, as tsc's CommonJS output has it: Jest runs modules in a vm without ES module
// support, where a real import() throws.
const OPTIONS = {
  supported: { 'dynamic-import': false },
  loader: 'ts',
  format: 'cjs',
  platform: 'node',
  target: 'es2022',
  sourcemap: 'external',
  sourcesContent: false,
};
const KEY = crypto
  .createHash('sha256')
  .update(`${version} ${JSON.stringify(OPTIONS)} ${__filename}`)
  .digest('hex');

module.exports = {
  process(source, file) {
    const { code, map } = transformSync(source, { ...OPTIONS, sourcefile: file });
    return { code, map };
  },
  getCacheKey(source, file, { configString }) {
    return crypto
      .createHash('sha256')
      .update(KEY)
      .update('\0')
      .update(file)
      .update('\0')
      .update(configString)
      .update('\0')
      .update(source)
      .digest('hex');
  },
};
