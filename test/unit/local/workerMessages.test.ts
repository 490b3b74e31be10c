import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { errorFrom, errorShape } from '../../../local/workers/messages';

/** An error thrown in a function worker crosses to the stack's thread (structured clone) with what the readers need. */
test('a cancelled transaction keeps its name, message and reasons across the thread', () => {
  const error = new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: [{ Code: 'None' }, { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' }],
  });

  const back = errorFrom(structuredClone(errorShape(error)));

  expect(back.name).toBe('TransactionCanceledException');
  expect(back.message).toBe('Transaction cancelled');
  expect((back as unknown as { CancellationReasons: unknown }).CancellationReasons).toEqual([
    { Code: 'None' },
    { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' },
  ]);
});

test('a thrown non-error becomes an error with its text', () => {
  const back = errorFrom(structuredClone(errorShape('boom')));
  expect(back).toBeInstanceOf(Error);
  expect(back.message).toBe('boom');
});
