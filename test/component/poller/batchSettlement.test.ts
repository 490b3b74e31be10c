import type { SQSRecord } from 'aws-lambda';
import { BatchOutcome, settleBatch, type HandlerResult } from '../../../local/poller';

const records = ['m1', 'm2', 'm3'].map((messageId) => ({ messageId, receiptHandle: `rh-${messageId}` }) as SQSRecord);
const returned = (value: unknown): HandlerResult => ({ threw: false, value });
const deleted = (result: HandlerResult, report = true) => settleBatch(records, result, report).toDelete.map((r) => r.messageId);

describe("Lambda's partial batch response rules", () => {
  test.each<[string, unknown]>([
    ['nothing (void)', undefined],
    ['null', null],
    ['an empty object', {}],
    ['a null list', { batchItemFailures: null }],
    ['an empty list', { batchItemFailures: [] }],
  ])('returning %s is full success: every message is deleted', (_, value) => {
    expect(settleBatch(records, returned(value))).toEqual({ outcome: BatchOutcome.Succeeded, toDelete: records });
  });

  test('listed failures are kept, the rest deleted', () => {
    const result = returned({ batchItemFailures: [{ itemIdentifier: 'm2' }] });
    expect(deleted(result)).toEqual(['m1', 'm3']);
    expect(settleBatch(records, result).outcome).toBe(BatchOutcome.PartiallyFailed);
  });

  test('every message listed is a full failure', () => {
    const result = returned({ batchItemFailures: records.map((r) => ({ itemIdentifier: r.messageId })) });
    expect(settleBatch(records, result)).toEqual({ outcome: BatchOutcome.Failed, toDelete: [] });
  });

  test.each<[string, unknown]>([
    ['an unknown message id', [{ itemIdentifier: 'm2' }, { itemIdentifier: 'nope' }]],
    ['an empty identifier', [{ itemIdentifier: '' }]],
    ['a null identifier', [{ itemIdentifier: null }]],
    ['a bad key name', [{ itemId: 'm1' }]],
    ['a null entry', [null]],
    ['a list that is not a list', 'm1'],
  ])('a response with %s fails the whole batch', (_, batchItemFailures) => {
    expect(settleBatch(records, returned({ batchItemFailures }))).toEqual({ outcome: BatchOutcome.Failed, toDelete: [] });
  });

  test('a response that is not an object fails the whole batch', () => {
    expect(deleted(returned('ok'))).toEqual([]);
  });

  test('a thrown error (or a timeout) deletes nothing', () => {
    expect(settleBatch(records, { threw: true, error: new Error('boom') })).toEqual({ outcome: BatchOutcome.Failed, toDelete: [] });
  });

  test('without ReportBatchItemFailures the response is ignored and success deletes all', () => {
    expect(deleted(returned({ batchItemFailures: [{ itemIdentifier: 'm2' }] }), false)).toEqual(['m1', 'm2', 'm3']);
    expect(deleted({ threw: true, error: new Error('boom') }, false)).toEqual([]);
  });
});
