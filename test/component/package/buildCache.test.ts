import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { cachedBuild } = require('../../../bin/serverless/buildCache.cjs') as {
  cachedBuild: (build: (options: Options) => Promise<Result>, options: Options, dir?: string) => Promise<Result>;
};

interface Options {
  absWorkingDir: string;
  entryPoints: string[];
  minify?: boolean;
}
interface Result {
  outputFiles: Array<{ contents: Uint8Array }>;
  metafile: { inputs: Record<string, unknown> };
}

/**
 * The test suite's cache of function bundles (bin/serverless/buildCache.cjs, used where SLUICE_BUNDLE_CACHE is set): a
 * bundle is reused only while every input esbuild recorded has the same content and the options are the same.
 */
let root: string;
let cache: string;
let builds: number;
/** A stand-in for esbuild: the bundle is the inputs' contents, the inputs are the entry and lib.ts. */
const build = async (options: Options): Promise<Result> => {
  builds++;
  const fs = await import('node:fs/promises');
  const inputs = [options.entryPoints[0]!, 'lib.ts'];
  const text = (await Promise.all(inputs.map((file) => fs.readFile(path.join(options.absWorkingDir, file), 'utf8')))).join('|');
  return { outputFiles: [{ contents: Buffer.from(text) }], metafile: { inputs: Object.fromEntries(inputs.map((i) => [i, {}])) } };
};
const text = (result: Result) => Buffer.from(result.outputFiles[0]!.contents).toString();

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'sluice-build-cache-'));
  cache = path.join(root, 'cache');
  builds = 0;
  await writeFile(path.join(root, 'entry.ts'), 'entry v1');
  await writeFile(path.join(root, 'lib.ts'), 'lib v1');
});
afterEach(() => rm(root, { recursive: true, force: true }));

test('the same inputs and options: built once, the cached bundle and metafile given after', async () => {
  const options = { absWorkingDir: root, entryPoints: ['entry.ts'] };
  const first = await cachedBuild(build, options, cache);
  const second = await cachedBuild(build, options, cache);
  expect(builds).toBe(1);
  expect(text(second)).toBe('entry v1|lib v1');
  expect(second.metafile).toEqual(first.metafile);
});

test('an input changed (not the entry): built again, with the new content', async () => {
  const options = { absWorkingDir: root, entryPoints: ['entry.ts'] };
  await cachedBuild(build, options, cache);
  await writeFile(path.join(root, 'lib.ts'), 'lib v2');
  expect(text(await cachedBuild(build, options, cache))).toBe('entry v1|lib v2');
  expect(builds).toBe(2);
});

test('other options, or no cache folder: built', async () => {
  await cachedBuild(build, { absWorkingDir: root, entryPoints: ['entry.ts'] }, cache);
  await cachedBuild(build, { absWorkingDir: root, entryPoints: ['entry.ts'], minify: true }, cache);
  await cachedBuild(build, { absWorkingDir: root, entryPoints: ['entry.ts'] }, '');
  expect(builds).toBe(3);
});
