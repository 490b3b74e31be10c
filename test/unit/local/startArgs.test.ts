import { StartUsageError } from '../../../shared/errors';
import { DEFAULT_PORTS, defaultTimeoutMs, parseStartArgs } from '../../../local/startArgs';
import { DEFAULT_WORKLOAD, describeRunTimes } from '../../../local/workload';

const usageError = (argv: string[]) => {
  try {
    parseStartArgs(argv);
  } catch (error) {
    expect(error).toBeInstanceOf(StartUsageError);
    return (error as Error).message;
  }
  throw new Error(`no error for ${JSON.stringify(argv)}`);
};

describe('npm start flags', () => {
  test('defaults: the sample workload at limit 8, no serve', () => {
    const options = parseStartArgs([]);
    expect(options).toMatchObject({ serve: false, limit: 8, json: false, ports: DEFAULT_PORTS, workers: 0 });
    expect(options.workload).toEqual(DEFAULT_WORKLOAD);
    expect(options.timeoutMs).toBeUndefined();
  });

  test('values as --flag value and --flag=value', () => {
    const options = parseStartArgs(['--jobs', '12', '--limit=3', '--glue-share', '0.5', '--sigma=.2', '--timeout-s', '9', '--json']);
    expect(options.workload).toMatchObject({ jobs: 12, glueShare: 0.5, sigma: 0.2 });
    expect(options).toMatchObject({ limit: 3, timeoutMs: 9_000, json: true });
  });

  test('--workers N runs each function in N threads of its own', () => {
    expect(parseStartArgs(['--workers', '2']).workers).toBe(2);
  });

  // The cases of issue 12, each one line naming the flag and the value.
  test.each([
    [['--frobnicate'], "unknown flag '--frobnicate'"],
    [['--jobs', '-5'], "--jobs must be a whole number from 1 to 100000, got '-5'"],
    [['--limit', 'abc'], "--limit must be a whole number from 0 to 10000, got 'abc'"],
    [['--limit', '1.5'], "--limit must be a whole number from 0 to 10000, got '1.5'"],
    [['--glue-share', '5'], "--glue-share must be a number from 0 to 1, got '5'"],
    [['--jobs', '2.5'], "--jobs must be a whole number from 1 to 100000, got '2.5'"],
    [['--jobs='], '--jobs needs a value'],
    [['--workers', '99'], "--workers must be a whole number from 0 to 16, got '99'"],
    [['--jobs'], '--jobs needs a value'],
    [['-x'], "unknown flag '-x'"],
    [['jobs'], "unexpected argument 'jobs' (flags start with --)"],
    [['--json=yes'], '--json takes no value'],
    [['--limit', '0'], '--limit 0 pauses the pool: no job of the sample workload would ever start (use --limit 1 or more)'],
    [['--sqs-port', '1'], '--sqs-port goes with --serve'],
    [['--serve', '--json'], '--json is for the sample workload run, not --serve'],
    [['--serve', '--pool', 'etl'], "--pool takes NAME=LIMIT, got 'etl'"],
    [['--serve', '--pool', 'etl=-1'], "--pool etl must be a whole number from 0 to 10000, got '-1'"],
    [['--serve', '--sqs-port', '70000'], "--sqs-port must be a whole number from 0 to 65535, got '70000'"],
  ])('%j: %s', (argv, message) => {
    const text = usageError(argv);
    expect(text).toBe(message);
    expect(text).not.toContain('\n');
  });

  test('--serve: no sample jobs unless asked, pools and ports from flags, limit 0 allowed (a paused pool)', () => {
    const options = parseStartArgs(['--serve', '--pool', 'etl=2', '--pool', 'crm=0', '--sqs-port', '0', '--limit', '0']);
    expect(options).toMatchObject({ serve: true, limit: 0, pools: { etl: 2, crm: 0 }, ports: { ...DEFAULT_PORTS, sqs: 0 } });
    expect(options.workload.jobs).toBe(0);
    expect(parseStartArgs(['--serve', '--jobs', '5']).workload.jobs).toBe(5);
    expect(parseStartArgs(['--serve', '--limit', '3']).pools).toEqual({ default: 3 });
    expect(parseStartArgs(['--serve']).pools).toBeUndefined();
  });
});

describe('the longest simulated run (--max-ms)', () => {
  test('follows --median-ms unless given: a median of a minute is not cut to 12 s; the start line says the cut', () => {
    expect(parseStartArgs([]).workload.maxMs).toBe(12_000);
    const long = parseStartArgs(['--serve', '--median-ms', '60000', '--sigma', '0']).workload;
    expect(long.maxMs).toBe(240_000);
    expect(describeRunTimes(long)).toBe('Simulated run times: log-normal, median 60.0 s, sigma 0, cut to 0.4 s..240.0 s (--max-ms)');
    const cut = parseStartArgs(['--serve', '--median-ms', '60000', '--max-ms', '12000']).workload;
    expect(cut.maxMs).toBe(12_000);
    expect(describeRunTimes(cut)).toMatch(/; the median is over the longest run: every run lasts 12\.0 s \(raise --max-ms\)$/);
    expect(parseStartArgs(['--max-ms', '100']).workload).toMatchObject({ minMs: 100, maxMs: 100 });
    expect(usageError(['--max-ms', '0'])).toBe("--max-ms must be a whole number from 1 to 604800000, got '0'");
  });
});

describe('the default timeout scales with the workload', () => {
  test('at least 300 s; a limit of 1 over 60 jobs gets three times their back-to-back run time', () => {
    expect(defaultTimeoutMs(DEFAULT_WORKLOAD, 8)).toBe(300_000);
    const meanMs = DEFAULT_WORKLOAD.medianMs * Math.exp(DEFAULT_WORKLOAD.sigma ** 2 / 2);
    expect(defaultTimeoutMs(DEFAULT_WORKLOAD, 1)).toBeCloseTo(60_000 + 3 * 60 * meanMs, 0);
    // 60 jobs one at a time take about 180 s: far inside the timeout, where 300 s was not for 100 jobs.
    expect(defaultTimeoutMs({ ...DEFAULT_WORKLOAD, jobs: 100 }, 1)).toBeGreaterThan(2 * 100 * meanMs);
  });
});

describe('--kinds', () => {
  test('every kind by default; a list picks some, in its order', () => {
    expect(parseStartArgs([]).workload.kinds).toEqual(['appflow', 'glue', 'sfn', 'ecs', 'batch', 'callback']);
    expect(parseStartArgs(['--kinds', 'sfn,appflow']).workload.kinds).toEqual(['sfn', 'appflow']);
    expect(parseStartArgs(['--kinds', 'batch,ecs']).workload.kinds).toEqual(['batch', 'ecs']);
  });

  test.each([
    [['--kinds', 'appflow,batchy'], "--kinds: unknown kind 'batchy' (kinds: appflow, glue, sfn, ecs, batch, callback)"],
    [['--kinds', 'glue,glue'], "--kinds names a kind twice: 'glue,glue'"],
  ])('%j: %s', (argv, message) => {
    expect(() => parseStartArgs(argv)).toThrow(message);
  });
});
