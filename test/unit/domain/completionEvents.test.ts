import {
  APPFLOW_SUCCESS_STATUS,
  GLUE_TERMINAL_STATES,
  MAX_RUN_ID_LENGTH,
  parseCompletionEvent,
} from '../../../shared/kinds/completionEvents';
import { InvalidEventError } from '../../../shared/errors';

const envelope = (source: string, detailType: string, detail: unknown) => ({
  version: '0',
  id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
  'detail-type': detailType,
  source,
  account: '111122223333',
  time: '2026-01-01T09:06:20Z',
  region: 'us-east-1',
  resources: [],
  detail,
});

const appflowEnd = (status: string, extra: Record<string, unknown> = {}) =>
  envelope('aws.appflow', 'AppFlow End Flow Run Report', {
    'flow-name': 'sales-to-s3',
    'flow-arn': 'arn:aws:appflow:us-east-1:111122223333:flow/sales-to-s3',
    'execution-id': '0a1b2c3d-exec',
    status,
    'trigger-type': 'ONDEMAND',
    'start-time': '2026-01-01T09:00:00.000Z[UTC]',
    'end-time': '2026-01-01T09:06:20.871Z[UTC]',
    'num-of-records-processed': '42',
    ...extra,
  });

const glueChange = (state: string, message?: string) =>
  envelope('aws.glue', 'Glue Job State Change', {
    jobName: 'nightly-etl',
    severity: state === 'SUCCEEDED' ? 'INFO' : 'ERROR',
    state,
    jobRunId: 'jr_0123456789abcdef',
    ...(message === undefined ? {} : { message }),
  });

function invalid(event: unknown): InvalidEventError {
  try {
    parseCompletionEvent(event);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidEventError);
    return error as InvalidEventError;
  }
  throw new Error('parsed a malformed event');
}

describe('completion events', () => {
  test('AppFlow success', () => {
    expect(parseCompletionEvent(appflowEnd(APPFLOW_SUCCESS_STATUS))).toEqual({
      kind: 'appflow',
      executionId: '0a1b2c3d-exec',
      outcome: 'succeeded',
      name: 'sales-to-s3',
      detail: 'Execution Successful',
    });
  });

  test.each(['Execution Failed', 'Execution Canceled', 'something new'])(
    'AppFlow status %p counts as a failure, keeping the status',
    (status) => {
      expect(parseCompletionEvent(appflowEnd(status))).toMatchObject({ kind: 'appflow', outcome: 'failed', detail: status });
    },
  );

  test('Glue SUCCEEDED', () => {
    expect(parseCompletionEvent(glueChange('SUCCEEDED', 'Job run succeeded'))).toEqual({
      kind: 'glue',
      executionId: 'jr_0123456789abcdef',
      outcome: 'succeeded',
      name: 'nightly-etl',
      detail: 'SUCCEEDED: Job run succeeded',
    });
  });

  test.each(['FAILED', 'TIMEOUT', 'STOPPED'])('Glue %s is a failure', (state) => {
    expect(parseCompletionEvent(glueChange(state))).toMatchObject({ kind: 'glue', outcome: 'failed', detail: state });
  });

  test('the Glue terminal states are the four Glue emits', () => {
    expect([...GLUE_TERMINAL_STATES].sort()).toEqual(['FAILED', 'STOPPED', 'SUCCEEDED', 'TIMEOUT']);
  });

  test.each(['RUNNING', 'STARTING', 'STOPPING', 'WAITING', 'ERROR'])('Glue %s is not a completion (undefined, not an error)', (state) => {
    expect(parseCompletionEvent(glueChange(state))).toBeUndefined();
  });

  test('an AppFlow event without an execution id is malformed', () => {
    const event = appflowEnd(APPFLOW_SUCCESS_STATUS);
    delete (event.detail as Record<string, unknown>)['execution-id'];
    expect(invalid(event).message).toMatch(/^malformed AppFlow completion event: detail\.execution-id/);
  });

  test('an AppFlow event of another detail-type (the start report) is malformed here', () => {
    const event = { ...appflowEnd(APPFLOW_SUCCESS_STATUS), 'detail-type': 'AppFlow Start Flow Run Report' };
    expect(invalid(event).message).toMatch(/^malformed AppFlow completion event: detail-type/);
  });

  test('a Glue event without jobRunId, or with an empty state, is malformed', () => {
    const noRun = glueChange('FAILED');
    delete (noRun.detail as Record<string, unknown>).jobRunId;
    expect(invalid(noRun).message).toMatch(/^malformed Glue completion event: detail\.jobRunId/);
    expect(invalid(glueChange('')).message).toMatch(/^malformed Glue completion event: detail\.state/);
  });

  test('an event without its envelope is malformed', () => {
    expect(invalid({ source: 'aws.glue', detail: glueChange('FAILED').detail }).message).toMatch(/^malformed Glue completion event/);
  });

  test.each([
    ['another source', envelope('aws.codebuild', 'CodeBuild Build State Change', {})],
    ['no source', { detail: {} }],
    ['null', null],
    ['a string', 'aws.glue'],
  ])('%s is not a completion Sluice knows', (_what, event) => {
    expect(invalid(event).message).toMatch(/^not a completion event Sluice knows: source /);
  });

  test("a callback job's report is not the releaser's to read (its token is checked by the callbacks function)", () => {
    const report = envelope('sluice.callback', 'Sluice Callback Completed', { token: 'cb1.forged.j1', outcome: 'succeeded' });
    expect(invalid(report).message).toBe('source "sluice.callback" is for the callbacks function, not the releaser');
  });
});

describe('run ids are capped at MAX_RUN_ID_LENGTH (a longer one cannot be a run Sluice started, nor fit a key)', () => {
  test('AppFlow execution-id: 256 characters pass, 257 are malformed', () => {
    expect(
      parseCompletionEvent(appflowEnd(APPFLOW_SUCCESS_STATUS, { 'execution-id': 'e'.repeat(MAX_RUN_ID_LENGTH) }))?.executionId,
    ).toHaveLength(256);
    expect(invalid(appflowEnd(APPFLOW_SUCCESS_STATUS, { 'execution-id': 'e'.repeat(MAX_RUN_ID_LENGTH + 1) })).message).toMatch(
      /execution-id/,
    );
  });

  test('Glue jobRunId: 256 characters pass, 257 are malformed', () => {
    const withRunId = (jobRunId: string) => {
      const event = glueChange('SUCCEEDED');
      return { ...event, detail: { ...(event.detail as Record<string, unknown>), jobRunId } };
    };
    expect(parseCompletionEvent(withRunId('r'.repeat(MAX_RUN_ID_LENGTH)))?.executionId).toHaveLength(256);
    expect(invalid(withRunId('r'.repeat(MAX_RUN_ID_LENGTH + 1))).message).toMatch(/jobRunId/);
  });
});
