import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * The user docs (README.md and docs/*.md) as a reader meets them: a front page short enough to read in a few minutes,
 * links that lead somewhere inside the repository (to a file, and to a heading of it when they name one), and no
 * project history (issue or defect numbers, commit hashes), which means nothing to a user.
 */

const ROOT = resolve(__dirname, '../..');
const README_MAX_BYTES = 16 * 1024;

const userDocs = (): string[] => [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

/** The text outside fenced code blocks, line by line (a `# ...` line in a shell block is no heading). */
function proseLines(text: string): string[] {
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      continue;
    }
    if (fence === undefined) lines.push(line);
  }
  return lines;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped (`-` and `_` kept), each space a `-`. */
export function headingSlug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor a file's headings get on GitHub (a repeated heading gets -1, -2, ...). */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = headingSlug(heading);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** The targets of the inline links and images of a file's prose (not inside code spans or blocks; a link's text may wrap). */
function linkTargets(text: string): string[] {
  const prose = proseLines(text)
    .map((line) => line.replace(/(`+)[^`]*?\1/g, ''))
    .join('\n');
  return [...prose.matchAll(/!?\[(?:[^\]]|\][^(])*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1] ?? '');
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** What is wrong with each relative link of a file: outside the repository, a missing file, or a missing heading. */
function brokenLinks(file: string, text = read(file)): string[] {
  const problems: string[] = [];
  for (const target of linkTargets(text)) {
    if (isExternal(target)) continue;
    const [pathPart = '', anchor] = target.split('#', 2);
    const absolute = pathPart === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURIComponent(pathPart));
    const inside = relative(ROOT, absolute);
    if (inside.split(sep)[0] === '..') {
      problems.push(`${file}: ${target} points outside the repository`);
      continue;
    }
    if (!existsSync(absolute)) {
      problems.push(`${file}: ${target}: no such file`);
      continue;
    }
    if (anchor && absolute.endsWith('.md') && !anchorsOf(readFileSync(absolute, 'utf8')).has(anchor))
      problems.push(`${file}: ${target}: no heading with that anchor in ${inside}`);
  }
  return problems;
}

/** Project history a user doc must not carry. */
const HISTORY: Array<[string, RegExp]> = [
  ['an issue number', /\bissues?\s+#?\d+/gi],
  ['an issue number', /(?<![\w&])#\d+\b/g],
  ['a defect number', /\bdefects?\s+#?\d+/gi],
  // 7-40 hex digits with at least one letter and one digit, not part of a name (subnet-0a1b2c3d is an example id).
  ['a commit hash', /(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w-])/g],
  ['a path outside the repository', /\.\.\/shared\b/g],
];

/** Each piece of project history in a text, with what it is. */
const historyIn = (text: string): string[] =>
  HISTORY.flatMap(([what, pattern]) => [...text.matchAll(pattern)].map((m) => `${what}: ${m[0]}`));

describe('user docs (README.md, docs/*.md)', () => {
  test(`README.md is a front page: at most ${README_MAX_BYTES / 1024} KB`, () => {
    expect(Buffer.byteLength(read('README.md'), 'utf8')).toBeLessThanOrEqual(README_MAX_BYTES);
  });

  test('README.md opens with the commands that run Sluice locally and run the tests', () => {
    const firstBlock = /```[a-z]*\n([\s\S]*?)```/.exec(read('README.md'))?.[1] ?? '';
    expect(firstBlock).toContain('npm ci && npm start');
    expect(firstBlock).toContain('npm ci && npm test');
  });

  test('every relative link leads to a file in the repository, and to a heading of it when it names one', () => {
    expect(userDocs().flatMap((file) => brokenLinks(file))).toEqual([]);
  });

  test('no project history: issue or defect numbers, commit hashes, paths outside the repository', () => {
    expect(userDocs().flatMap((file) => historyIn(read(file)).map((found) => `${file}: ${found}`))).toEqual([]);
  });

  test('the checks themselves: anchors, links and history are recognised', () => {
    expect(headingSlug('AppFlow flows (`appflow`)')).toBe('appflow-flows-appflow');
    expect(headingSlug('Jobs, the dead-letter queue, top and the dashboard')).toBe('jobs-the-dead-letter-queue-top-and-the-dashboard');
    expect(anchorsOf('# A\n```sh\n# not a heading\n```\n## B\n## B\n')).toEqual(new Set(['a', 'b', 'b-1']));
    expect(
      linkTargets('see [x](docs/a.md#b), `[y](not/a/link.md)`, ![c](bench/c.svg) and [a\nwrapped](d.md)\n```\n[z](in/code.md)\n```'),
    ).toEqual(['docs/a.md#b', 'bench/c.svg', 'd.md']);
    expect(
      brokenLinks(
        'docs/page.md',
        '[a](../../shared/aws-facts.md) [b](nothere.md) [c](protocol.md#no-such) [d](protocol.md#the-table) [e](https://x.org/y)',
      ),
    ).toEqual([
      'docs/page.md: ../../shared/aws-facts.md points outside the repository',
      'docs/page.md: nothere.md: no such file',
      'docs/page.md: protocol.md#no-such: no heading with that anchor in docs/protocol.md',
    ]);
    expect(historyIn('fixed in issue 8 (defect 3, at `9774b99`, #12); see ../shared/aws-facts.md')).toEqual([
      'an issue number: issue 8',
      'an issue number: #12',
      'a defect number: defect 3',
      'a commit hash: 9774b99',
      'a path outside the repository: ../shared',
    ]);
    expect(historyIn('subnet-0a1b2c3d, run 20261127T0100Z, account 111122223333, decade, [x](#anchor-2), &#123;')).toEqual([]);
  });
});
