/**
 * EventBridge event patterns (content filtering) for the local bus: the subset Sluice and typical rules use.
 *
 * Supported: nested objects, arrays of exact values (string, number, boolean, null), prefix, suffix (both also with
 * equals-ignore-case), equals-ignore-case, wildcard, anything-but (value, list, prefix, suffix, equals-ignore-case,
 * wildcard), exists, numeric ranges, and $or. Not supported: cidr (rejected as invalid, so a rule never silently
 * fails to match).
 *
 * Wildcard, as EventBridge's matcher (Event Ruler) defines it
 * (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-content-based-filtering.html#eb-filtering-wildcard-matching,
 * https://github.com/aws/event-ruler#wildcard-matching): on string values only, `*` matches any run of characters
 * (none included) and may appear any number of times, but never twice in a row (`**` is refused); `\*` is a literal
 * asterisk and `\\` a literal backslash; a backslash before anything else is refused. Every other character, `?`
 * included, matches only itself.
 */

/** A pattern as it comes from JSON or YAML; `assertValidPattern` checks its shape at run time. */
export type EventPattern = { readonly [field: string]: unknown };

type Primitive = string | number | boolean | null;
type Json = { readonly [key: string]: unknown };

const MATCHERS = ['prefix', 'suffix', 'anything-but', 'exists', 'numeric', 'equals-ignore-case', 'wildcard'] as const;
type MatcherName = (typeof MATCHERS)[number];
const NUMERIC_OPERATORS = ['=', '<', '<=', '>', '>='] as const;

/** True if `event` matches `pattern`. Throws, like PutRule's InvalidEventPatternException, on a malformed pattern. */
export function matchesPattern(pattern: EventPattern, event: unknown): boolean {
  assertValidPattern(pattern);
  return matchObject(pattern, event);
}

function matchObject(pattern: EventPattern, value: unknown): boolean {
  // Array consistency (EventBridge/Event Ruler): fields of one nested pattern must all match within the same element.
  if (Array.isArray(value)) return value.some((element) => matchObject(pattern, element));
  const object = isObject(value) ? value : undefined;
  return Object.entries(pattern).every(([key, sub]) => {
    if (key === '$or') return (sub as EventPattern[]).some((alternative) => matchObject(alternative, value));
    const field = object?.[key];
    return Array.isArray(sub) ? matchLeaf(sub, leafValues(field)) : matchObject(sub as EventPattern, field);
  });
}

/** The leaf values at a field: none if it is missing or an object (matchers, exists included, see leaves only). */
function leafValues(field: unknown): Primitive[] {
  if (field === undefined || isObject(field)) return [];
  if (Array.isArray(field)) return field.flatMap(leafValues);
  return [field as Primitive];
}

function matchLeaf(allowed: readonly unknown[], values: Primitive[]): boolean {
  return allowed.some((rule) => {
    if (isObject(rule) && 'exists' in rule) return values.length > 0 === rule.exists;
    return values.some((value) => matchValue(rule, value));
  });
}

function matchValue(rule: unknown, value: Primitive): boolean {
  if (!isObject(rule)) return rule === value; // numbers compare by value, so 3.018e2 equals 301.8
  const [name, argument] = Object.entries(rule)[0] as [MatcherName, unknown];
  switch (name) {
    case 'prefix':
      return (
        typeof value === 'string' &&
        stringTest(
          argument,
          (p) => value.startsWith(p),
          (p) => lower(value).startsWith(lower(p)),
        )
      );
    case 'suffix':
      return (
        typeof value === 'string' &&
        stringTest(
          argument,
          (s) => value.endsWith(s),
          (s) => lower(value).endsWith(lower(s)),
        )
      );
    case 'equals-ignore-case': // a list only inside anything-but
      return typeof value === 'string' && [argument].flat().some((a) => lower(a as string) === lower(value));
    case 'wildcard':
      return typeof value === 'string' && wildcardRegExp(parseWildcard(argument as string)).test(value);
    case 'numeric':
      return typeof value === 'number' && numericTest(argument as unknown[], value);
    case 'anything-but':
      return anythingBut(argument, value);
    default:
      return false; // 'exists' is handled by matchLeaf; anything else was rejected by assertValidPattern
  }
}

/** anything-but never matches a missing field (there is no value to test), hence it is applied per value. */
function anythingBut(argument: unknown, value: Primitive): boolean {
  if (Array.isArray(argument)) return !argument.includes(value);
  if (isObject(argument)) return typeof value === 'string' && !matchValue(argument, value);
  return argument !== value;
}

/** prefix and suffix take a string or `{ "equals-ignore-case": string }`. */
function stringTest(argument: unknown, exact: (s: string) => boolean, ignoringCase: (s: string) => boolean): boolean {
  return typeof argument === 'string' ? exact(argument) : ignoringCase((argument as Json)['equals-ignore-case'] as string);
}

const COMPARE: Record<(typeof NUMERIC_OPERATORS)[number], (a: number, b: number) => boolean> = {
  '=': (a, b) => a === b,
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
};

/** `[op, bound]` or `[op, bound, op, bound]`: every comparison must hold. */
function numericTest(conditions: readonly unknown[], value: number): boolean {
  for (let i = 0; i < conditions.length; i += 2) {
    if (!COMPARE[conditions[i] as keyof typeof COMPARE](value, conditions[i + 1] as number)) return false;
  }
  return true;
}

/** A wildcard pattern's pieces (literal strings, and WILD for each `*`), or why EventBridge refuses it. */
const WILD = Symbol('wildcard');
type WildcardPiece = string | typeof WILD;

function parseWildcard(pattern: string): WildcardPiece[] | { invalid: string } {
  const pieces: WildcardPiece[] = [];
  let literal = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next !== '*' && next !== '\\') return { invalid: 'a backslash may only escape * or \\' };
      literal += next;
      i++;
    } else if (c === '*') {
      if (pieces[pieces.length - 1] === WILD && literal === '') return { invalid: 'consecutive wildcard characters are not allowed' };
      if (literal !== '') pieces.push(literal);
      literal = '';
      pieces.push(WILD);
    } else {
      literal += c;
    }
  }
  if (literal !== '') pieces.push(literal);
  return pieces;
}

function wildcardRegExp(pieces: WildcardPiece[] | { invalid: string }): RegExp {
  if (!Array.isArray(pieces)) throw new InvalidEventPatternError(pieces.invalid);
  const source = pieces.map((p) => (p === WILD ? '.*' : p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${source}$`, 's');
}

const lower = (s: string) => s.toLowerCase();

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---- validation: reject what EventBridge's PutRule would reject, so a typo fails loudly instead of never matching ----

export class InvalidEventPatternError extends Error {
  override readonly name = 'InvalidEventPatternException';
}

export function assertValidPattern(pattern: unknown, path = '$'): asserts pattern is EventPattern {
  if (!isObject(pattern) || Object.keys(pattern).length === 0) fail(path, 'must be a non-empty object');
  for (const [key, sub] of Object.entries(pattern)) {
    const at = `${path}.${key}`;
    if (key === '$or') {
      if (!Array.isArray(sub) || sub.length < 2) fail(at, 'must be an array of at least two patterns');
      sub.forEach((alternative, i) => assertValidPattern(alternative, `${at}[${i}]`));
    } else if (Array.isArray(sub)) {
      if (sub.length === 0) fail(at, 'must not be an empty array');
      sub.forEach((rule, i) => assertValidRule(rule, `${at}[${i}]`));
    } else if (isObject(sub)) {
      assertValidPattern(sub, at);
    } else {
      fail(at, 'must be an array of values or matchers, or a nested object');
    }
  }
}

function assertValidRule(rule: unknown, at: string): void {
  if (rule === null || ['string', 'number', 'boolean'].includes(typeof rule)) return;
  if (!isObject(rule) || Object.keys(rule).length !== 1) fail(at, 'must be a value or an object with one matcher');
  const [name, argument] = Object.entries(rule)[0] as [string, unknown];
  const isString = typeof argument === 'string';
  const isIgnoreCase = isObject(argument) && Object.keys(argument).length === 1 && typeof argument['equals-ignore-case'] === 'string';
  switch (name as MatcherName) {
    case 'prefix':
    case 'suffix':
      if (!isString && !isIgnoreCase) fail(at, `${name} takes a string or {"equals-ignore-case": string}`);
      return;
    case 'equals-ignore-case':
      if (!isString) fail(at, `${name} takes a string`);
      return;
    case 'wildcard':
      if (!isString) fail(at, `${name} takes a string`);
      assertValidWildcard(argument, at);
      return;
    case 'exists':
      if (typeof argument !== 'boolean') fail(at, 'exists takes true or false');
      return;
    case 'numeric':
      assertValidNumeric(argument, at);
      return;
    case 'anything-but':
      assertValidAnythingBut(argument, at);
      return;
    default:
      fail(at, `unsupported matcher "${name}" (supported: ${MATCHERS.join(', ')})`);
  }
}

function assertValidAnythingBut(argument: unknown, at: string): void {
  const isValue = (v: unknown) => typeof v === 'string' || typeof v === 'number';
  if (isValue(argument)) return;
  if (Array.isArray(argument) && argument.length > 0 && argument.every(isValue)) return;
  if (isObject(argument) && Object.keys(argument).length === 1) {
    const [inner] = Object.keys(argument);
    if (inner === 'prefix' || inner === 'suffix' || inner === 'equals-ignore-case' || inner === 'wildcard') {
      if (typeof argument[inner] === 'string') {
        if (inner === 'wildcard') assertValidWildcard(argument[inner], at);
        return;
      }
      // anything-but equals-ignore-case also takes a list of strings
      const list = argument[inner];
      if (inner === 'equals-ignore-case' && Array.isArray(list) && list.every((v) => typeof v === 'string')) return;
    }
  }
  fail(at, 'anything-but takes a string, a number, a list of them, or {prefix|suffix|equals-ignore-case|wildcard: string}');
}

function assertValidNumeric(argument: unknown, at: string): void {
  const ok =
    Array.isArray(argument) &&
    (argument.length === 2 || argument.length === 4) &&
    argument.every((v, i) =>
      i % 2 === 0 ? (NUMERIC_OPERATORS as readonly unknown[]).includes(v) : typeof v === 'number' && Number.isFinite(v),
    ) &&
    (argument.length === 2 || (argument[0] !== '=' && argument[2] !== '='));
  if (!ok) fail(at, 'numeric takes [op, number] or [op, number, op, number] with op one of = < <= > >=');
}

function assertValidWildcard(pattern: string, at: string): void {
  const parsed = parseWildcard(pattern);
  if (!Array.isArray(parsed)) fail(at, `wildcard ${JSON.stringify(pattern)}: ${parsed.invalid}`);
}

function fail(at: string, message: string): never {
  throw new InvalidEventPatternError(`${at}: ${message}`);
}
