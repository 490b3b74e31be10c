import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * The domain is the ground: its rules import nothing of Sluice but each other and the named errors, and only the few
 * packages that are plain computation, so no import cycle can pass through it and the rules run without AWS, a clock
 * or chance. The kinds (and their union, JobSpec) compose above it.
 */
const ROOT = path.resolve(__dirname, '../../..');
const DOMAIN = path.join(ROOT, 'shared/domain');
const ALLOWED_PACKAGES = ['zod', 'yaml', 'cron-parser'];

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'node_modules' ? [] : tsFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

/** Every module a file names: static imports and re-exports (type-only ones too), require() and import(). */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
  return [...new Set(found)];
}

/** A relative specifier as the repository file it names, or undefined for a package. */
function resolve(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts'), base]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next form
    }
  }
  throw new Error(`${path.relative(ROOT, from)}: cannot resolve ${spec}`);
}

const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

describe('the domain is the ground', () => {
  const files = tsFiles(DOMAIN);

  test('each domain file imports only other domain files, the named errors and plain-computation packages', () => {
    const outside = files.flatMap((file) =>
      specifiers(file)
        .filter((spec) => {
          const target = resolve(file, spec);
          if (target === undefined) return !ALLOWED_PACKAGES.includes(spec);
          return !(target.startsWith(DOMAIN + path.sep) || target === path.join(ROOT, 'shared/errors.ts'));
        })
        .map((spec) => `${path.relative(ROOT, file)} -> ${spec}`),
    );
    expect(outside).toEqual([]);
    // The named errors are a leaf: they import nothing, so the domain's one way out leads nowhere further.
    expect(specifiers(path.join(ROOT, 'shared/errors.ts'))).toEqual([]);
  });

  test('no domain rule reads a clock or chance', () => {
    const uses = files.filter((file) =>
      /\bDate\.now\s*\(|\bMath\.random\s*\(|\bnew Date\(\s*\)/.test(withoutComments(readFileSync(file, 'utf8'))),
    );
    expect(uses.map((file) => path.relative(ROOT, file))).toEqual([]);
  });

  test('no import cycle of the deployed code passes through the domain', () => {
    // Tarjan's strongly connected components over functions/ and shared/.
    const nodes = [...tsFiles(path.join(ROOT, 'functions')), ...tsFiles(path.join(ROOT, 'shared'))];
    const edges = new Map(nodes.map((file) => [file, specifiers(file).flatMap((spec) => resolve(file, spec) ?? [])]));
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const crossing: string[][] = [];
    let next = 0;
    const visit = (node: string) => {
      index.set(node, next);
      low.set(node, next++);
      stack.push(node);
      onStack.add(node);
      for (const to of edges.get(node) ?? []) {
        if (!index.has(to)) {
          visit(to);
          low.set(node, Math.min(low.get(node)!, low.get(to)!));
        } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
      if (low.get(node) === index.get(node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== node);
        if (component.length > 1 && component.some((file) => file.startsWith(DOMAIN + path.sep)))
          crossing.push(component.map((file) => path.relative(ROOT, file)).sort());
      }
    };
    for (const node of nodes) if (!index.has(node)) visit(node);
    expect(crossing).toEqual([]);
  });
});
