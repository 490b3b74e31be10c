import type { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import fc from 'fast-check';
import { enqueueJobs } from '../../../shared/cli/enqueue';
import { JobSpecSchema } from '../../../shared/kinds/registry';

/** What SQS accepts in a message body; anything else fails the whole batch entry with InvalidMessageContents. */
const SQS_TEXT = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;

/** An SQS client that accepts every entry and keeps the bodies it was given. */
function recordingSqs() {
  const bodies: string[] = [];
  const sqs = {
    async send(command: SendMessageBatchCommand) {
      const entries = command.input.Entries ?? [];
      bodies.push(...entries.map((e) => e.MessageBody!));
      return { Successful: entries.map((e) => ({ Id: e.Id })), Failed: [] };
    },
  } as unknown as SQSClient;
  return { sqs, bodies };
}

const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const anyCodePoint = fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c));
const anyText = fc.string({ unit: fc.oneof(anyUnit, anyCodePoint, fc.constantFrom('\uFFFE', '\uFFFF')), maxLength: 12 });

describe('sluice enqueue', () => {
  test('never sends a body SQS refuses: a spec with U+FFFF in an argument is reported, not sent raw', async () => {
    const { sqs, bodies } = recordingSqs();
    const report = await enqueueJobs(sqs, 'https://q', [
      { id: 'bad', kind: 'glue', jobName: 'etl', arguments: { '--day': '2026-11-22\uFFFF' } },
      { id: 'good', kind: 'glue', jobName: 'etl', arguments: { '--day': '2026-11-22' } },
    ]);
    for (const body of bodies) expect(body).toMatch(SQS_TEXT);
    expect(report.sent).toEqual(['good']);
    expect(report.rejected).toEqual([
      { index: 0, reason: expect.stringContaining('arguments.--day: argument value has characters Glue rejects') },
    ]);
  });

  test('every spec it sends is SQS text that parses back to the spec the acquirer will read', async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(anyText, anyText, { maxKeys: 3 }), async (args) => {
        const { sqs, bodies } = recordingSqs();
        const spec = { id: 'j1', kind: 'glue', jobName: 'etl', arguments: args };
        const report = await enqueueJobs(sqs, 'https://q', [spec]);
        for (const body of bodies) {
          expect(body).toMatch(SQS_TEXT);
          expect(JobSpecSchema.parse(JSON.parse(body))).toEqual(JobSpecSchema.parse(spec));
        }
        expect(report.sent.length + report.rejected.length).toBe(1);
      }),
      { numRuns: 300 },
    );
  });

  test('--at puts the same notBefore on every job of the file, replacing any it had; a spec that is not an object is still rejected', async () => {
    const { sqs, bodies } = recordingSqs();
    const at = '2026-11-27T02:00:00+01:00';
    const report = await enqueueJobs(
      sqs,
      'https://q',
      [{ id: 'a', kind: 'glue', jobName: 'etl' }, { id: 'b', kind: 'appflow', flowName: 'f', notBefore: '2020-01-01T00:00:00Z' }, 42],
      { notBefore: at },
    );
    expect(report.sent).toEqual(['a', 'b']);
    expect(report.rejected.map((r) => r.index)).toEqual([2]);
    expect(bodies.map((b) => (JSON.parse(b) as { notBefore?: string }).notBefore)).toEqual([at, at]);
  });
});
