'use strict';
/**
 * A cache of esbuild's function bundles, used only where SLUICE_BUNDLE_CACHE names a folder (the test suite sets it:
 * it packages the service about six times, for stages whose bundles are the same, and each packaging spent about 5 s
 * of CPU in esbuild). `npm run package` and deploys leave it unset and always build.
 *
 * An entry is keyed by the build's options and esbuild's version, and holds the inputs esbuild recorded (its metafile)
 * with a hash of each one's content: it is used only while every one of those files has the same content. A file that
 * would change how an import resolves without changing any input (a new file beside one) is not seen: hence tests only.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const sha256 = (data) => crypto.createHash('sha256').update(data).digest('hex');

/** Content hashes of the build's inputs, by path relative to its working folder; undefined if one cannot be read. */
function inputHashes(root, inputs) {
  const hashes = {};
  for (const input of inputs) {
    try {
      hashes[input] = sha256(fs.readFileSync(path.resolve(root, input)));
    } catch {
      return undefined;
    }
  }
  return hashes;
}

/** build(options) as esbuild's (write: false, metafile: true, one output file), through the cache in `dir`. */
async function cachedBuild(build, options, dir = process.env.SLUICE_BUNDLE_CACHE) {
  if (!dir) return build(options);
  const { version } = require('esbuild/package.json');
  const key = sha256(JSON.stringify({ version, options }));
  const index = path.join(dir, `${key}.json`);
  try {
    const entry = JSON.parse(fs.readFileSync(index, 'utf8'));
    const now = inputHashes(options.absWorkingDir, Object.keys(entry.inputs));
    if (now && Object.entries(entry.inputs).every(([input, hash]) => now[input] === hash)) {
      const contents = fs.readFileSync(path.join(dir, `${key}.js`));
      // the output this index was written with (two packagings of different sources may have crossed)
      if (sha256(contents) === entry.output) return { outputFiles: [{ contents }], metafile: entry.metafile };
    }
  } catch {
    // no entry, or one torn by a crash: build
  }
  const result = await build(options);
  const inputs = inputHashes(options.absWorkingDir, Object.keys(result.metafile.inputs));
  if (inputs && result.outputFiles.length === 1) {
    fs.mkdirSync(dir, { recursive: true });
    // Written aside, then renamed: a reader never sees half a file.
    const put = (file, data) => {
      const aside = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(aside, data);
      fs.renameSync(aside, file);
    };
    put(path.join(dir, `${key}.js`), result.outputFiles[0].contents);
    put(index, JSON.stringify({ inputs, output: sha256(result.outputFiles[0].contents), metafile: result.metafile }));
  }
  return result;
}

module.exports = { cachedBuild };
