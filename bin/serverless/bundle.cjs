'use strict';
/**
 * A local Serverless plugin (serverless.yml, plugins): bundles each function with esbuild and hands the framework the
 * zip as the function's `package.artifact`, so the framework packages nothing itself. Each zip holds the function's
 * one bundle (`functions/<name>.js`, handler `functions/<name>.handler`) and the files its `package.patterns` names
 * (plain paths, e.g. the jobSets function's job sets file). Beside each zip, `<name>.meta.json` is esbuild's metafile:
 * the bundle's inputs, file by file, which test/component/package/template.test.ts reads to prove what a deployed
 * function does and does not contain. The esbuild options are serverless.yml's custom.esbuild.
 *
 * The zips are deterministic (entries in a fixed order with a fixed date): the framework names a function's version
 * by the hash of its zip, so a package of unchanged code makes no new version.
 */
const fs = require('node:fs');
const path = require('node:path');
const { cachedBuild } = require('./buildCache.cjs');

/** The date every zip entry carries (DOS dates start in 1980). */
const ZIP_DATE = new Date(Date.UTC(1980, 0, 1));
/** Options that are the plugin's to set, not the stage's. */
const OWN_OPTIONS = ['entryPoints', 'outfile', 'outdir', 'write', 'metafile', 'stdin'];

class Bundle {
  constructor(serverless, options, { log } = {}) {
    this.serverless = serverless;
    this.options = options;
    this.log = log;
    this.hooks = {
      'before:package:createDeploymentArtifacts': () => this.bundleAll(),
      // `serverless deploy function -f NAME` packages that one function.
      'before:package:function:package': () => this.bundleAll(this.options.function ? [this.options.function] : undefined),
    };
  }

  serviceDir() {
    return this.serverless.serviceDir ?? this.serverless.config.servicePath;
  }

  /** Where the framework builds the package: .serverless, whose files it moves to `--package DIR` when given one. */
  packageDir() {
    return path.join(this.serviceDir(), '.serverless');
  }

  esbuildOptions() {
    const custom = (this.serverless.service.custom ?? {}).esbuild ?? {};
    const own = OWN_OPTIONS.filter((name) => name in custom);
    if (own.length > 0) throw new this.serverless.classes.Error(`custom.esbuild: ${own.join(', ')} are set by bin/serverless/bundle.cjs`);
    return custom;
  }

  async bundleAll(names = this.serverless.service.getAllFunctions()) {
    const { build } = require('esbuild');
    const dir = this.packageDir();
    fs.mkdirSync(dir, { recursive: true });
    const options = this.esbuildOptions();
    await Promise.all(names.map((name) => this.bundleFunction(build, name, options, dir)));
  }

  async bundleFunction(build, name, options, dir) {
    const Error = this.serverless.classes.Error;
    const fn = this.serverless.service.getFunction(name);
    if (fn.image) return;
    const root = this.serviceDir();
    // `functions/acquirer.handler` -> functions/acquirer.ts, bundled to functions/acquirer.js
    const module = /^(.+)\.[^./]+$/.exec(fn.handler ?? '')?.[1];
    const entry = module && ['.ts', '.js'].map((ext) => module + ext).find((file) => fs.existsSync(path.join(root, file)));
    if (!entry) throw new Error(`function ${name}: no source file for handler '${fn.handler}' (looked for ${module}.ts, .js)`);
    const outName = `${module}.js`;
    const result = await cachedBuild(build, {
      ...options,
      absWorkingDir: root,
      entryPoints: [entry],
      outfile: outName,
      write: false,
      metafile: true,
      logLevel: 'warning',
    });
    const [output] = result.outputFiles;
    if (result.outputFiles.length !== 1) throw new Error(`function ${name}: esbuild wrote ${result.outputFiles.length} files, not one`);

    const files = [{ name: outName, data: Buffer.from(output.contents) }];
    for (const pattern of (fn.package ?? {}).patterns ?? []) {
      if (/[*?[\]{}!]/.test(pattern)) throw new Error(`function ${name}: package.patterns takes plain file paths here, not '${pattern}'`);
      const file = path.resolve(root, pattern);
      const relative = path.relative(root, file);
      if (relative.startsWith('..') || path.isAbsolute(relative)) throw new Error(`function ${name}: ${pattern} is outside the service`);
      if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile())
        throw new Error(`function ${name}: package.patterns names ${pattern}, no such file`);
      files.push({ name: relative.split(path.sep).join('/'), data: fs.readFileSync(file) });
    }

    const artifact = path.join(dir, `${name}.zip`);
    await writeZip(artifact, files);
    fs.writeFileSync(path.join(dir, `${name}.meta.json`), JSON.stringify(result.metafile));
    fn.package = { ...(fn.package ?? {}), artifact };
    this.log?.verbose?.(`bundled ${name}: ${entry} -> ${artifact} (${fs.statSync(artifact).size} bytes)`);
  }
}

/** Writes the files to a zip (deflated, in the order given, each with ZIP_DATE and mode 644). */
function writeZip(file, files) {
  const { ZipFile } = require('yazl');
  const zip = new ZipFile();
  for (const { name, data } of files) zip.addBuffer(data, name, { mtime: ZIP_DATE, mode: 0o100644, compress: true });
  zip.end();
  return new Promise((resolve, reject) => {
    const out = fs.createWriteStream(file);
    zip.outputStream.on('error', reject).pipe(out).on('error', reject).on('close', resolve);
  });
}

module.exports = Bundle;
