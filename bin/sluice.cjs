#!/usr/bin/env node
'use strict';
// The `sluice` command (package.json "bin"): meant for a checkout of this repository after `npm ci`. `sluice --help`
// lists the commands.
//
// It runs the TypeScript sources as one file esbuild (a devDependency) bundles from them, kept in .sluice/cli/ and made
// again when a source under shared/ or the lock file changes: loading that file takes about a third of the time of
// loading the sources one by one through tsx, which every command paid at its start. Should the bundle fail, the
// sources run through tsx as before.

// On Node 20 the AWS SDK prints an 8-line notice on every command that its releases after January 2027 need Node 22.
// The lock file pins releases that run on Node 20, so it is noise here (see README, "Node versions");
// SLUICE_SDK_NODE_WARNING=1 lets it through.
if (!process.env.SLUICE_SDK_NODE_WARNING) process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const vm = require('node:vm');

const ROOT = path.resolve(__dirname, '..');
// Two levels below the checkout, as shared/cli/ is: the sources' paths relative to their own folder still hold.
const BUNDLES = path.join(ROOT, '.sluice', 'cli');

/** A key of every source the CLI may load (path, size, modification time) and of the installed packages' lock. */
function sourcesKey() {
  const hash = crypto.createHash('sha256');
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else {
        const stat = fs.statSync(file);
        hash.update(`${path.relative(ROOT, file)}\0${stat.size}\0${stat.mtimeMs}\n`);
      }
    }
  };
  walk(path.join(ROOT, 'shared'));
  for (const file of ['package-lock.json', 'bin/sluice.cjs']) {
    const stat = fs.statSync(path.join(ROOT, file));
    hash.update(`${file}\0${stat.size}\0${stat.mtimeMs}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

/** The bundle of shared/cli/main.ts for these sources, made if missing (written aside, then renamed: runs at once agree). */
function bundle() {
  const file = path.join(BUNDLES, `cli-${sourcesKey()}.cjs`);
  if (fs.existsSync(file)) return file;
  const { buildSync } = require('esbuild');
  fs.mkdirSync(BUNDLES, { recursive: true });
  const aside = `${file}.${process.pid}.tmp`;
  buildSync({
    entryPoints: [path.join(ROOT, 'shared/cli/main.ts')],
    outfile: aside,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    logLevel: 'silent',
  });
  fs.renameSync(aside, file);
  // Bundles of older sources: no longer used.
  for (const old of fs.readdirSync(BUNDLES))
    if (!old.startsWith(path.basename(file)) && /\.(cjs|v8cache)$/.test(old)) fs.rmSync(path.join(BUNDLES, old), { force: true });
  return file;
}

function runThroughTsx() {
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
}

/**
 * Loads the bundle as `require` would, with V8's code cache kept beside it (`<bundle>.v8cache`): compiling the 4 MB
 * bundle was about 80 of the 210 ms a command took to start; with the cache a command starts in about 140 ms. Node 20
 * has no module compile cache of its own (node:module's enableCompileCache is Node 22's). A cache V8 rejects (another
 * Node version) is made again; one that cannot be written is not kept.
 */
function load(file) {
  const cacheFile = `${file}.v8cache`;
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(Module.wrap(fs.readFileSync(file, 'utf8')), {
    filename: file,
    cachedData,
    // the bundle's own import() of Node's modules, as in a module require loads
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const loaded = new Module(file, module);
  loaded.filename = file;
  loaded.paths = Module._nodeModulePaths(path.dirname(file));
  script.runInThisContext()(loaded.exports, Module.createRequire(file), loaded, file, path.dirname(file));
  if (cachedData === undefined || script.cachedDataRejected) {
    try {
      const aside = `${cacheFile}.${process.pid}.tmp`;
      fs.writeFileSync(aside, script.createCachedData());
      fs.renameSync(aside, cacheFile);
    } catch {
      // a read-only checkout: no cache, the same start as before
    }
  }
  return loaded.exports;
}

let main;
try {
  main = load(bundle());
} catch {
  main = undefined;
}
if (main) main.run();
else runThroughTsx();
