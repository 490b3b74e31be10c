import { MAX_JOB_BYTES, parseJob } from '../../../shared/app/parseJob';
import { InvalidJobError } from '../../../shared/errors';

function errorOf(body: string): InvalidJobError {
  try {
    parseJob(body, 'sqs-message-id');
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidJobError);
    return error as InvalidJobError;
  }
  throw new Error(`parseJob accepted ${body}`);
}

describe('parseJob', () => {
  test('a valid body becomes the job spec, with the default pool filled in', () => {
    expect(parseJob('{"id":"j1","kind":"appflow","flowName":"f1"}', 'm1')).toEqual({ id: 'j1', pool: 'default', kind: 'appflow', flowName: 'f1' });
  });

  test('a body without an id takes the message id (stable across redeliveries of that message)', () => {
    expect(parseJob('{"kind":"glue","jobName":"etl"}', 'a1b2-c3')).toMatchObject({ id: 'a1b2-c3', kind: 'glue' });
  });

  test('an explicit id wins over the message id; an explicit bad id is not replaced', () => {
    expect(parseJob('{"id":"mine","kind":"glue","jobName":"etl"}', 'msg').id).toBe('mine');
    expect(errorOf('{"id":null,"kind":"glue","jobName":"etl"}').message).toMatch(/^invalid job: id: /);
  });

  test('not JSON', () => {
    const error = errorOf('{"kind": "appflow",');
    expect(error.message).toMatch(/^message is not JSON: /);
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  test('an empty body is not JSON', () => {
    expect(errorOf('').message).toMatch(/^message is not JSON: /);
  });

  test.each([
    ['[]', 'an array'],
    ['[{"id":"a"}]', 'an array'],
    ['null', 'null'],
    ['"text"', 'string'],
    ['42', 'number'],
    ['true', 'boolean'],
  ])('%s is not an object: says it got %s', (body, what) => {
    expect(errorOf(body).message).toBe(`message must be a JSON object, got ${what}`);
  });

  test('an oversize body is refused before parsing, with its size', () => {
    const body = JSON.stringify({ id: 'big', kind: 'glue', jobName: 'j', arguments: { '--blob': 'x'.repeat(MAX_JOB_BYTES) } });
    const bytes = Buffer.byteLength(body);
    expect(errorOf(body).message).toBe(`message is ${bytes} bytes; a job spec may be at most ${MAX_JOB_BYTES}`);
  });

  test('the size is counted in UTF-8 bytes, not characters', () => {
    // 22,000 three-byte characters: 66,000 bytes but only 22,000 characters
    const body = JSON.stringify({ id: 'wide', kind: 'glue', jobName: 'j', arguments: { '--text': '€'.repeat(22_000) } });
    expect(body.length).toBeLessThan(MAX_JOB_BYTES);
    expect(errorOf(body).message).toMatch(/^message is \d+ bytes; a job spec may be at most 65536$/);
  });

  test('exactly at the limit is accepted', () => {
    const skeleton = JSON.stringify({ id: 'edge', pool: 'default', kind: 'glue', jobName: 'j', arguments: { '--pad': '' } });
    const body = JSON.stringify({
      id: 'edge',
      pool: 'default',
      kind: 'glue',
      jobName: 'j',
      arguments: { '--pad': 'x'.repeat(MAX_JOB_BYTES - skeleton.length) },
    });
    expect(Buffer.byteLength(body)).toBe(MAX_JOB_BYTES);
    expect(parseJob(body, 'm').id).toBe('edge');
  });

  test('a body within the limit whose defaults (pool, id) would take it over is refused: Sluice could not send it again', () => {
    // Without pool and id the body fits; every body Sluice sends again carries them (encodeJobBody) and would not.
    const skeleton = JSON.stringify({ kind: 'glue', jobName: 'j', arguments: { '--pad': '' } });
    const body = JSON.stringify({ kind: 'glue', jobName: 'j', arguments: { '--pad': 'x'.repeat(MAX_JOB_BYTES - skeleton.length) } });
    expect(Buffer.byteLength(body)).toBe(MAX_JOB_BYTES);
    const encoded = MAX_JOB_BYTES + ',"id":"sqs-message-id","pool":"default"'.length;
    expect(errorOf(body).message).toBe(
      `job is ${encoded} bytes with its defaults filled in (pool, id), as Sluice sends it again; a job spec may be at most ${MAX_JOB_BYTES}`,
    );
  });

  test('schema problems are listed with their path', () => {
    const message = errorOf('{"id":"j1","kind":"glue","jobName":"","arguments":{"--n":1}}').message;
    expect(message).toMatch(/^invalid job: /);
    expect(message).toContain('jobName: ');
    expect(message).toContain('arguments.--n: ');
    expect(message.split('; ').every((issue) => /^(invalid job: )?(jobName|arguments\.--n): /.test(issue))).toBe(true);
  });

  test('an unknown kind is named in the message', () => {
    expect(errorOf('{"id":"j1","kind":"lambda"}').message).toMatch(/^invalid job: kind: /);
  });

  test('a problem with no path is reported against (message)', () => {
    expect(errorOf('{"id":"j1","kind":"appflow","flowName":"f","extra":true}').message).toMatch(/^invalid job: \(message\): .*extra/);
  });

  test('at most five problems are listed', () => {
    const args = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`--a${i}`, i]));
    const message = errorOf(JSON.stringify({ id: 'j1', kind: 'glue', jobName: 'j', arguments: args })).message;
    expect(message.split('; ')).toHaveLength(5);
  });

  test('the zod error is kept as the cause', () => {
    expect(errorOf('{"id":"j1","kind":"glue"}').cause).toHaveProperty('issues');
  });
});
