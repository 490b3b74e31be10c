import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import { InvocationAbandonedError } from '../../../shared/errors';
import {
  AsyncInvoker,
  asyncInvokeConfig,
  currentInvocation,
  fenceAbandonedInvocations,
  type InvocationRecord,
  type InvocationScope,
  runInvocation,
} from '../../../local/lambda';
import { createLambdaContext } from '../../../local/poller';

/**
 * The local Lambda's asynchronous invocations, driven for real with compressed time (a minute is 30 ms here): retries,
 * throttles, event ages, the on-failure record, duplicates, and an invocation abandoned at its timeout whose AWS calls
 * are refused by the fence on the client.
 */
const TIME_SCALE = 0.0005;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Resolves when the current invocation is abandoned (never otherwise). */
function untilAbandonedHere(): Promise<void> {
  const signal = currentInvocation()!.signal;
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}
async function waitUntil(done: () => boolean): Promise<void> {
  while (!done()) await sleep(5);
}

type Handler = (event: unknown, context: Context) => Promise<unknown>;

function invokerFor(handler: Handler, settings: Parameters<typeof asyncInvokeConfig>[1] = {}, timeoutMs = 5_000) {
  const records: Array<{ destination: unknown; record: InvocationRecord }> = [];
  const invoker = new AsyncInvoker({
    functions: {
      fn: { config: asyncInvokeConfig('fn', settings), timeoutMs, functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:fn' },
    },
    dispatch: (_name, event, context) => handler(event, context),
    context: (name, ms) => createLambdaContext({ functionName: name, timeoutMs: ms, region: 'us-east-1', accountId: '000000000000' }),
    timeScale: TIME_SCALE,
    sendToDestination: async (destination, record) => void records.push({ destination, record }),
  });
  return { invoker, records };
}

/** A client whose requests never leave the process: each is recorded, answered when `answer` resolves. */
function wiredClient(answer: () => Promise<unknown> = () => Promise.resolve()) {
  const sent: string[] = [];
  const client = new SQSClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 });
  fenceAbandonedInvocations(client);
  client.middlewareStack.add(
    (_next, context) => async () => {
      sent.push(context.commandName ?? '?');
      await answer();
      return { output: { $metadata: {}, QueueUrls: [] }, response: {} } as never;
    },
    { step: 'deserialize', priority: 'high', name: 'testWire' },
  );
  return { client, sent };
}

test('a function error is retried a minute later (compressed), then succeeds: the fate is the success', async () => {
  let calls = 0;
  const { invoker } = invokerFor(async (event) => {
    if (++calls === 1) throw new Error('first time fails');
    return { echoed: event };
  });
  await expect(invoker.invoke('fn', { a: 1 })).resolves.toEqual({ echoed: { a: 1 } });
  const [event] = invoker.events();
  expect(event!.attempts.map((a) => a.outcome)).toEqual(['function-error', 'succeeded']);
  expect(event!.attempts[1]!.startedAt - event!.attempts[0]!.endedAt).toBeGreaterThanOrEqual(60_000 * TIME_SCALE - 2);
  expect(event!.outcome).toBe('succeeded');
});

test('every attempt failing: 3 attempts a minute then two apart, then the record goes to the on-failure destination', async () => {
  const destination = { type: 'sqs', arn: 'arn:aws:sqs:us-east-1:000000000000:failures' };
  const { invoker, records } = invokerFor(async () => Promise.reject(new TypeError('always')), {
    destinations: { onFailure: destination },
  });
  await expect(invoker.invoke('fn', { set: 'nightly' })).rejects.toThrow('always');
  const [event] = invoker.events();
  const gaps = event!.attempts.slice(1).map((a, i) => a.startedAt - event!.attempts[i]!.endedAt);
  expect(event!.attempts).toHaveLength(3);
  expect(gaps[0]).toBeGreaterThanOrEqual(60_000 * TIME_SCALE - 2);
  expect(gaps[1]).toBeGreaterThanOrEqual(120_000 * TIME_SCALE - 2);
  expect(records).toEqual([
    {
      destination,
      record: expect.objectContaining({
        requestContext: expect.objectContaining({ condition: 'RetriesExhausted', approximateInvokeCount: 3 }),
        requestPayload: { set: 'nightly' },
        responsePayload: { errorType: 'TypeError', errorMessage: 'always' },
      }),
    },
  ]);
  expect(invoker.failures()).toEqual([expect.objectContaining({ functionName: 'fn', delivered: true })]);
});

test('without a destination the event is discarded; with maximumRetryAttempts 0 after one attempt', async () => {
  const { invoker, records } = invokerFor(async () => Promise.reject(new Error('no')), { maximumRetryAttempts: 0 });
  await expect(invoker.invoke('fn', {})).rejects.toThrow('no');
  expect(invoker.events()[0]!.attempts).toHaveLength(1);
  expect(records).toEqual([]);
  expect(invoker.failures()).toEqual([expect.objectContaining({ functionName: 'fn', record: expect.objectContaining({}) })]);
});

test('configure changes the retries for the events that follow (PutFunctionEventInvokeConfig)', async () => {
  const { invoker } = invokerFor(async () => Promise.reject(new Error('no')));
  invoker.configure('fn', { maximumRetryAttempts: 1 });
  await expect(invoker.invoke('fn', {})).rejects.toThrow('no');
  expect(invoker.events()[0]!.attempts).toHaveLength(2);
});

test('throttles are retried with backoff until the function runs, and use up none of the retries', async () => {
  let ran = 0;
  const { invoker } = invokerFor(async () => ++ran, { maximumRetryAttempts: 0 });
  invoker.faults.throttleNext('fn', 3);
  await expect(invoker.invoke('fn', {})).resolves.toBe(1);
  expect(invoker.events()[0]!.attempts.map((a) => a.outcome)).toEqual(['throttled', 'throttled', 'throttled', 'succeeded']);
});

test('an event older than its maximum age when its retry would come is given up: EventAgeExceeded', async () => {
  const { invoker, records } = invokerFor(async () => Promise.reject(new Error('no')), {
    maximumEventAge: 90,
    destinations: { onFailure: 'arn:aws:sqs:us-east-1:000000000000:failures' },
  });
  await expect(invoker.invoke('fn', {})).rejects.toThrow('no');
  // run at 0 and (unless the machine is slow enough to age it past 90 s first) after a minute; never a third time,
  // two minutes later: that is past 90 s whatever the timing
  expect(invoker.events()[0]!.attempts.length).toBeLessThanOrEqual(2);
  expect(records[0]!.record.requestContext.condition).toBe('EventAgeExceeded');
});

test('an event may be delivered twice: the handler runs twice for one invoke', async () => {
  const seen: unknown[] = [];
  const { invoker } = invokerFor(async (event) => void seen.push(event));
  invoker.faults.duplicateNext('fn');
  await invoker.invoke('fn', { n: 1 });
  await invoker.drain();
  expect(seen).toEqual([{ n: 1 }, { n: 1 }]);
  expect(invoker.events().map((e) => e.duplicate)).toEqual([false, true]);
});

test('a failure injected before the handler is a function error, retried', async () => {
  let ran = 0;
  const { invoker } = invokerFor(async () => ++ran);
  invoker.faults.failNext('fn');
  await expect(invoker.invoke('fn', {})).resolves.toBe(1);
  expect(invoker.events()[0]!.attempts.map((a) => a.outcome)).toEqual(['function-error', 'succeeded']);
});

describe('the timeout', () => {
  /** Resolves when the current invocation is abandoned (never otherwise): a handler stuck until its timeout. */
  const untilAbandoned = () => {
    const signal = currentInvocation()!.signal;
    return new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
  };

  test('an invocation past its timeout fails at once ("Task timed out") and is retried; its later AWS calls are refused', async () => {
    const { client, sent } = wiredClient();
    const late: unknown[] = [];
    let attempt = 0;
    const { invoker } = invokerFor(
      async () => {
        if (++attempt > 1) return 'second attempt done';
        await untilAbandoned();
        // past the timeout: this invocation is abandoned, the call never leaves
        await client.send(new ListQueuesCommand({})).catch((error: unknown) => void late.push(error));
        return 'never seen';
      },
      {},
      50,
    );
    await expect(invoker.invoke('fn', {})).resolves.toBe('second attempt done');
    const [first] = invoker.events()[0]!.attempts;
    expect(first).toMatchObject({
      outcome: 'function-error',
      timedOut: true,
      error: 'FunctionTimeoutError: Task timed out after 0.05 seconds',
    });
    await invoker.close(); // waits for the abandoned invocation to settle
    expect(sent).toEqual([]);
    expect(late).toEqual([expect.any(InvocationAbandonedError)]);
  });

  test('an answer that comes after the timeout is not given to the abandoned invocation', async () => {
    const { client, sent } = wiredClient(untilAbandoned);
    const outcome: unknown[] = [];
    const { invoker } = invokerFor(
      async () => {
        await client.send(new ListQueuesCommand({})).then(
          () => outcome.push('answered'),
          (error: unknown) => outcome.push(error),
        );
      },
      { maximumRetryAttempts: 0 },
      40,
    );
    await expect(invoker.invoke('fn', {})).rejects.toThrow('Task timed out after 0.04 seconds');
    await invoker.close();
    expect(sent).toEqual(['ListQueuesCommand']); // it left before the timeout (it may have been applied)...
    expect(outcome).toEqual([expect.any(InvocationAbandonedError)]); // ...but the code never sees its answer
  });

  test('in an invocation, calls go out until it is abandoned, and none after', async () => {
    const { client, sent } = wiredClient();
    let scope: InvocationScope | undefined;
    const refused: unknown[] = [];
    const result = await runInvocation({
      functionName: 'fn',
      timeoutMs: 60_000,
      onStart: (s) => (scope = s),
      run: async () => {
        await client.send(new ListQueuesCommand({}));
        scope!.abandon('a test says so');
        await client.send(new ListQueuesCommand({})).catch((error: unknown) => void refused.push(error));
      },
    });
    expect(result).toMatchObject({ ok: false, timedOut: false, error: expect.any(InvocationAbandonedError) });
    expect(sent).toEqual(['ListQueuesCommand']);
    await waitUntil(() => refused.length === 1);
    expect(String(refused[0])).toContain('abandoned: a test says so');
  });

  test('timeOutNext abandons the next attempt after the time it names', async () => {
    let attempt = 0;
    const { invoker } = invokerFor(async () => (++attempt === 1 ? untilAbandoned().then(() => 'late') : 'ok'));
    invoker.faults.timeOutNext('fn', 30);
    await expect(invoker.invoke('fn', {})).resolves.toBe('ok');
    expect(invoker.events()[0]!.attempts.map((a) => a.timedOut ?? false)).toEqual([true, false]);
    await invoker.close();
  });

  test('calls outside any invocation (the stack itself, a test) are never fenced', async () => {
    const { client, sent } = wiredClient();
    await client.send(new ListQueuesCommand({}));
    expect(sent).toEqual(['ListQueuesCommand']);
  });
});

test('close shuts down an attempt running: its AWS calls are refused from then on, and close waits for it', async () => {
  const { client, sent } = wiredClient();
  const refused: unknown[] = [];
  let started = false;
  const { invoker } = invokerFor(async () => {
    started = true;
    await untilAbandonedHere();
    await client.send(new ListQueuesCommand({})).catch((error: unknown) => void refused.push(error));
  });
  const fate = invoker.invoke('fn', {});
  await waitUntil(() => started);
  await invoker.close();
  expect(sent).toEqual([]);
  expect(String(refused[0])).toContain('the local stack stopped');
  await expect(fate).rejects.toThrow('the local stack stopped');
});

test('close drops the events waiting for a retry and refuses new ones', async () => {
  const { invoker } = invokerFor(async () => Promise.reject(new Error('no')));
  const fate = invoker.invoke('fn', {});
  await sleep(10);
  await invoker.close();
  await expect(fate).rejects.toThrow('no');
  expect(invoker.events()[0]!.outcome).toBe('stopped');
  await expect(invoker.invoke('fn', {})).rejects.toThrow('stopped');
});
