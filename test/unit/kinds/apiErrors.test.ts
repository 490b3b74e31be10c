import fs from 'node:fs';
import path from 'node:path';
import {
  type AnyOperationErrors,
  CallRole,
  classifyApiError,
  COMMON_ERRORS,
  fullTable,
  ReadTake,
  StartTake,
  StopTake,
} from '../../../shared/kinds/apiErrors';
import { KINDS } from '../../../shared/kinds/registry';
import { modelledStatus } from '../../../local/simulators/errorStatus';

/**
 * The kinds' error tables (shared/kinds/<kind>/apiErrors.ts) against the SDK clients they speak to: every command a
 * starter sends has a table; every exception the SDK lists for it (`@throws` in the command's type docs) is in it; no
 * entry names an error the SDK does not have, unless the errors every AWS API shares have it, or AWS documents it
 * elsewhere (then it says where). A new SDK release that adds an exception to one of these commands fails here until
 * the table says how Sluice takes it.
 */

const ROOT = path.resolve(__dirname, '../../..');
const KINDS_DIR = path.join(ROOT, 'shared/kinds');
const sdkDir = (client: string) => path.dirname(require.resolve(`${client}/package.json`, { paths: [ROOT] }));

/** The `@throws` of a command's type docs: its exceptions, then the client's base exception class (last). */
function throwsOf(client: string, operation: string): { exceptions: string[]; base: string } {
  const text = fs.readFileSync(path.join(sdkDir(client), 'dist-types/commands', `${operation}Command.d.ts`), 'utf8');
  const names = [...text.matchAll(/@throws \{@link (\w+)\}/g)].map((m) => m[1]!);
  const base = names[names.length - 1]!;
  expect([operation, base]).toEqual([operation, expect.stringMatching(/ServiceException$/)]);
  return { exceptions: names.slice(0, -1), base };
}

/** The exception classes a client exports (subclasses of its base exception). */
function exceptionClassesOf(client: string, base: string): Set<string> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sdk = require(client) as Record<string, unknown>;
  const Base = sdk[base] as abstract new (...args: never[]) => unknown;
  return new Set(
    Object.entries(sdk)
      .filter(
        ([name, value]) => name !== base && typeof value === 'function' && (value as { prototype: unknown }).prototype instanceof Base,
      )
      .map(([name]) => name),
  );
}

/** All of a client's type docs, to find error codes it documents without a class (a PutEvents entry's ErrorCode). */
const docsOf = (() => {
  const cache = new Map<string, string>();
  const read = (dir: string): string =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .map((e) =>
        e.isDirectory() ? read(path.join(dir, e.name)) : e.name.endsWith('.d.ts') ? fs.readFileSync(path.join(dir, e.name), 'utf8') : '',
      )
      .join('\n');
  return (client: string) => {
    if (!cache.has(client)) cache.set(client, read(path.join(sdkDir(client), 'dist-types')));
    return cache.get(client)!;
  };
})();

/** Errors AWS documents outside the SDK client (the entry's documentedAt says where), each named here on purpose. */
const DOCUMENTED_OUTSIDE_THE_SDK = ['@aws-sdk/client-batch TooManyRequestsException'];

/** The commands a kind's starter (and its senders) send: `new <Operation>Command(` in the kind's SDK adapters. */
function commandsSentBy(kind: string): Set<string> {
  const dir = path.join(KINDS_DIR, kind);
  const files = [
    'starter.ts',
    ...(fs.existsSync(path.join(dir, 'send')) ? fs.readdirSync(path.join(dir, 'send')).map((f) => `send/${f}`) : []),
  ];
  const text = files.map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('\n');
  return new Set([...text.matchAll(/new (\w+)Command\(/g)].map((m) => m[1]!));
}

const tables = KINDS.flatMap((kind) => kind.apiErrors.map((op) => [kind.kind, `${op.operation} (${op.role})`, op] as const));

describe.each(KINDS.map((k) => [k.kind, k] as const))('%s', (_, kind) => {
  test('has a table for every command its starter sends, and none for a command it does not', () => {
    expect([...new Set(kind.apiErrors.map((op) => op.operation))].sort()).toEqual([...commandsSentBy(kind.kind)].sort());
  });

  test('a job API call has one table per role it plays', () => {
    const keys = kind.apiErrors.map((op) => `${op.operation} ${op.role}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe.each(tables)('%s %s', (_kind, _what, op: AnyOperationErrors) => {
  const { exceptions, base } = throwsOf(op.client, op.operation);
  const classes = exceptionClassesOf(op.client, base);

  test("names every exception the SDK's command lists", () => {
    expect(exceptions.length).toBeGreaterThan(0);
    expect(exceptions.filter((name) => !Object.hasOwn(op.errors, name))).toEqual([]);
  });

  test('names no error the SDK does not have, but the common ones and those AWS documents elsewhere (saying where)', () => {
    const unknown: string[] = [];
    for (const [name, entry] of Object.entries(op.errors)) {
      if (classes.has(name) || Object.hasOwn(COMMON_ERRORS, name)) {
        expect([name, entry.documentedAt, entry.http]).toEqual([name, undefined, undefined]);
        continue;
      }
      expect([name, entry.documentedAt]).toEqual([name, expect.stringMatching(/^https:\/\//)]);
      expect([name, entry.http]).toEqual([name, expect.any(Number)]);
      if (!docsOf(op.client).includes(name)) unknown.push(`${op.client} ${name}`);
    }
    expect(unknown.filter((n) => !DOCUMENTED_OUTSIDE_THE_SDK.includes(n))).toEqual([]);
  });

  test('every entry has a take of its role and a reason; every message case matches its example and takes it', () => {
    const takes: readonly string[] = Object.values(
      op.role === CallRole.Start ? StartTake : op.role === CallRole.Stop ? StopTake : ReadTake,
    );
    for (const [name, entry] of Object.entries(fullTable(op))) {
      expect([name, takes.includes(entry.take), entry.why.length > 10]).toEqual([name, true, true]);
      for (const c of entry.byMessage ?? []) {
        expect([name, c.match.test(c.example), takes.includes(c.take)]).toEqual([name, true, true]);
        expect(classifyApiError(op, { name, message: c.example })).toMatchObject({ take: c.take, documented: true });
      }
    }
  });

  test('a permission error is never taken as gone (a permissions mistake must not free slots)', () => {
    for (const [name, entry] of Object.entries(fullTable(op))) {
      if (/AccessDenied|NotAuthorized|Unauthorized|Unrecognized|Signature/.test(name)) {
        expect([name, entry.take, ...(entry.byMessage ?? []).map((c) => c.take)]).not.toContain(ReadTake.Gone);
        if (op.role !== CallRole.Start) expect([name, entry.take]).not.toEqual([name, StopTake.AlreadyEnded]);
      }
    }
  });

  test('cites the API reference and the common errors pages', () => {
    expect(op.reference).toMatch(/^https:\/\/docs\.aws\.amazon\.com\/.*\S$/);
    expect(op.commonErrors).toMatch(/^https:\/\/docs\.aws\.amazon\.com\/.*CommonErrors\.html$/);
  });

  test("the simulator finds each SDK exception's HTTP status in the SDK's model", () => {
    for (const name of Object.keys(op.errors).filter((n) => classes.has(n))) {
      expect([name, modelledStatus(op.client, name)]).toEqual([name, expect.any(Number)]);
    }
  });
});

describe('classifyApiError', () => {
  const op = KINDS.find((k) => k.kind === 'appflow')!.apiErrors.find((o) => o.role === CallRole.Start)!;
  const status = KINDS.find((k) => k.kind === 'appflow')!.apiErrors.find((o) => o.role === CallRole.Status)!;

  test('an operation entry wins over the common one; a common one applies when the operation has none', () => {
    expect(classifyApiError(op, { name: 'ThrottlingException' })).toMatchObject({ take: StartTake.Refused, documented: true });
    expect(classifyApiError(op, { name: 'InternalFailure', httpStatus: 500 })).toMatchObject({
      take: StartTake.Uncertain,
      documented: true,
    });
    expect(classifyApiError(op, { name: 'ExpiredTokenException', httpStatus: 403 })).toMatchObject({ take: StartTake.Refused });
    expect(classifyApiError(status, { name: 'AccessDeniedException', httpStatus: 403 })).toMatchObject({ take: ReadTake.Permanent });
  });

  test.each([
    ['a 429', { name: 'SlowDown', httpStatus: 429 }, StartTake.Refused, ReadTake.Transient, StopTake.Transient],
    [
      'a throttling mark',
      { name: 'Whatever', httpStatus: 400, throttling: true },
      StartTake.Refused,
      ReadTake.Transient,
      StopTake.Transient,
    ],
    ['another 4xx', { name: 'SomeBadRequest', httpStatus: 400 }, StartTake.Permanent, ReadTake.Permanent, StopTake.Permanent],
    ['a 5xx', { name: 'SomeServerFault', httpStatus: 502 }, StartTake.Uncertain, ReadTake.Transient, StopTake.Transient],
    ['no answer', { name: 'TimeoutError' }, StartTake.Uncertain, ReadTake.Transient, StopTake.Transient],
    ['no name', {}, StartTake.Uncertain, ReadTake.Transient, StopTake.Transient],
  ])('an error no table names (%s) is taken by its answer', (_what, error, start, read, stop) => {
    const of = (role: CallRole) => classifyApiError({ ...op, role, errors: {} } as AnyOperationErrors, error);
    expect([of(CallRole.Start).take, of(CallRole.Status).take, of(CallRole.Lookup).take, of(CallRole.Stop).take]).toEqual([
      start,
      read,
      read,
      stop,
    ]);
    expect(of(CallRole.Start).documented).toBe(false);
  });

  test('a name that is an Object.prototype property is no entry (the table is looked up by own key)', () => {
    expect(classifyApiError(op, { name: 'constructor', httpStatus: 500 })).toMatchObject({ take: StartTake.Uncertain, documented: false });
  });
});

test('the SDK model gives the statuses AWS documents (the simulator answers with them)', () => {
  expect(modelledStatus('@aws-sdk/client-appflow', 'ConflictException')).toBe(409);
  expect(modelledStatus('@aws-sdk/client-appflow', 'ServiceQuotaExceededException')).toBe(402);
  expect(modelledStatus('@aws-sdk/client-appflow', 'ThrottlingException')).toBe(429);
  expect(modelledStatus('@aws-sdk/client-glue', 'InternalServiceException')).toBe(500);
  expect(modelledStatus('@aws-sdk/client-glue', 'EntityNotFoundException')).toBe(400);
  expect(modelledStatus('@aws-sdk/client-ecs', 'ServerException')).toBe(500);
  expect(modelledStatus('@aws-sdk/client-lambda', 'TooManyRequestsException')).toBe(429);
  expect(modelledStatus('@aws-sdk/client-lambda', 'ResourceNotFoundException')).toBe(404);
  expect(modelledStatus('@aws-sdk/client-sfn', 'ThrottlingException')).toBeUndefined();
});
