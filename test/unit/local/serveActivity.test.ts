import { readableLogLine } from '../../../local/serveActivity';

const context = {
  timestamp: '2026-11-28T08:55:24.663Z',
  service: 'sluice-local',
  cold_start: false,
  function_arn: 'arn:aws:lambda:us-east-1:000000000000:function:sluice-local-releaser',
  function_memory_size: '128',
  function_name: 'sluice-local-releaser',
  function_request_id: 'ef30078d-0843-4b9d-8b72-4ed54da9da5b',
  sampling_rate: 0,
};

describe("the resident stack's log: a function's JSON log line as one readable line", () => {
  test('time, level, function and message, then its own fields (an error by its name and message)', () => {
    const line = JSON.stringify({
      level: 'WARN',
      message: 'could not count a job set run',
      ...context,
      set: 'daily',
      attempt: 2,
      error: { name: 'ThrottlingException', location: 'x.js:1', message: 'Rate exceeded', stack: 'ThrottlingException: ...' },
    });
    expect(readableLogLine(line)).toBe(
      '08:55:24.663 warn      releaser: could not count a job set run (set daily, attempt 2, error ThrottlingException: Rate exceeded)',
    );
  });

  test("a dead letter's log line is dropped (the activity line says it); any other line is left as it is", () => {
    expect(readableLogLine(JSON.stringify({ level: 'ERROR', message: 'job dead-lettered', ...context, jobId: 'a' }))).toBe('');
    expect(readableLogLine('08:55:24.822 start     appflow sluice-a  job ok-1')).toBeUndefined();
    expect(readableLogLine('{"level": broken')).toBeUndefined();
    expect(readableLogLine("export AWS_REGION='us-east-1'")).toBeUndefined();
  });
});
