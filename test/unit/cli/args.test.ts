import { parseArgs, UsageError } from '../../../shared/cli/args';

describe('parseArgs', () => {
  test.each([
    [['pool', 'list'], { name: 'pool-list' }],
    [['pool', 'set-limit', 'etl', '4'], { name: 'pool-set-limit', pool: 'etl', limit: 4, create: false }],
    [['pool', 'set-limit', 'etl', '0'], { name: 'pool-set-limit', pool: 'etl', limit: 0, create: false }],
    [['pool', 'set-limit', 'etl', '1000', '--create'], { name: 'pool-set-limit', pool: 'etl', limit: 1000, create: true }],
    [['limit', 'set', 'org:acme', '2'], { name: 'pool-set-limit', pool: 'key/org:acme', limit: 2, create: true }],
    [['enqueue', 'jobs.jsonl'], { name: 'enqueue', file: 'jobs.jsonl' }],
    [['enqueue', '-'], { name: 'enqueue', file: '-' }],
    // A file name starting with '-' and a digit is a file, not a negative number (issue 12).
    [['enqueue', '-1.jsonl'], { name: 'enqueue', file: '-1.jsonl' }],
    [['enqueue', '--json', '-5'], { name: 'enqueue', file: '-5' }],
    [['enqueue', 'jobs.jsonl', '--at', '2026-11-27T02:00:00+01:00'], { name: 'enqueue', file: 'jobs.jsonl', at: '2026-11-27T02:00:00+01:00' }],
    [['cancel', 'nightly-1'], { name: 'cancel', id: 'nightly-1', stop: false }],
    [['cancel', 'nightly-1', '--stop'], { name: 'cancel', id: 'nightly-1', stop: true }],
    [['jobs', 'show', 'nightly-1'], { name: 'jobs-show', id: 'nightly-1' }],
    [['jobs', 'list'], { name: 'jobs-list', max: 50 }],
    [['jobs', 'list', '--pool', 'etl', '--state', 'dead', '--max', '5'], { name: 'jobs-list', pool: 'etl', state: 'dead', max: 5 }],
    [['dlq', 'list'], { name: 'dlq-list' }],
    [['dlq', 'redrive', '--all'], { name: 'dlq-redrive' }],
    [['dlq', 'redrive', '--id', 'a', '--id', 'b'], { name: 'dlq-redrive', ids: ['a', 'b'] }],
    [['top'], { name: 'top', once: false, intervalMs: 2000 }],
    [['top', '--once', '--interval-s', '5'], { name: 'top', once: true, intervalMs: 5000 }],
    [['sets', 'failed', 'daily-flows', '20261127T0100Z'], { name: 'sets-failed', set: 'daily-flows', run: '20261127T0100Z' }],
    [['dashboard'], { name: 'dashboard', port: 8470 }],
    [['dashboard', '--port', '0'], { name: 'dashboard', port: 0 }],
    [[], { name: 'help' }],
    [['help'], { name: 'help' }],
    [['pool', 'list', '--help'], { name: 'help' }],
    [['-h'], { name: 'help' }],
  ])('%j is %j', (argv, command) => {
    expect(parseArgs(argv).command).toEqual(command);
  });

  test('options come before or after the command, as --flag value or --flag=value', () => {
    const { command, options } = parseArgs([
      '--table',
      'sluice-dev',
      'pool',
      'set-limit',
      'etl',
      '2',
      '--queue-url=https://q/1',
      '--json',
      '--region',
      'eu-west-1',
    ]);
    expect(command).toEqual({ name: 'pool-set-limit', pool: 'etl', limit: 2, create: false });
    expect(options).toEqual({
      table: 'sluice-dev',
      queueUrl: 'https://q/1',
      dlqUrl: undefined,
      stage: undefined,
      region: 'eu-west-1',
      json: true,
    });
  });

  test('--stage and --dlq-url are read', () => {
    expect(parseArgs(['pool', 'list', '--stage', 'prod', '--dlq-url', 'https://d']).options).toMatchObject({
      stage: 'prod',
      dlqUrl: 'https://d',
      json: false,
    });
  });

  test.each([
    [['pool', 'set-limit', 'etl', '-1'], /whole number from 0 to 10000, got '-1'/],
    [['pool', 'set-limit', 'etl', '10001'], /from 0 to 10000, got '10001'/],
    [['pool', 'set-limit', 'etl', '2.5'], /whole number/],
    [['pool', 'set-limit', 'etl', 'four'], /whole number/],
    [['pool', 'set-limit', 'etl', ''], /whole number/],
    [['pool', 'set-limit', 'etl'], /usage: sluice pool set-limit POOL N/],
    [['pool', 'set-limit', 'etl', '2', '3'], /usage: sluice pool set-limit POOL N/],
    [['pool', 'set-limit', 'bad pool', '2'], /bad pool name 'bad pool'/],
    [['pool', 'set-limit', '-x', '2'], /Unknown option|bad pool name/],
    [['pool'], /needs a subcommand/],
    [['pool', 'delete'], /unknown pool subcommand 'delete'/],
    [['pool', 'list', 'extra'], /usage: sluice pool list/],
    [['enqueue'], /usage: sluice enqueue FILE \[--at TIME\] \(got no arguments\)/],
    [['enqueue', 'a', 'b'], /usage: sluice enqueue FILE/],
    [['enqueue', 'a', '--at', '2026-11-27T02:00:00'], /--at '2026-11-27T02:00:00': notBefore must be an ISO 8601 time with an offset/],
    [['enqueue', 'a', '--at', 'friday'], /--at 'friday': notBefore must be an ISO 8601 time/],
    [['cancel'], /usage: sluice cancel ID \[--stop\]/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['pool', 'list', '--tabel', 'x'], /Unknown option '--tabel'/],
    [['pool', 'list', '--table'], /argument missing|--table/],
    [['pool', 'list', '--table', ''], /--table needs a value/],
    [['jobs'], /'jobs' needs a subcommand/],
    [['jobs', 'show'], /usage: sluice jobs show ID/],
    [['jobs', 'list', '--state', 'done'], /unknown state 'done': use one of scheduled, queued, waiting, .*, cancelled/],
    [['jobs', 'list', '--max', '0'], /--max must be a whole number from 1/],
    [['dlq', 'redrive'], /needs --id ID \(one or more\) or --all/],
    [['dlq', 'redrive', '--all', '--id', 'x'], /needs --id ID \(one or more\) or --all, not both/],
    [['dlq', 'peek'], /unknown dlq subcommand 'peek'/],
    [['dashboard', '--port', '-1'], /--port must be a whole number from 0 to 65535, got '-1'/],
    [['top', 'now'], /usage: sluice top/],
  ])('%j is a usage error (%s)', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
    expect(() => parseArgs(argv)).toThrow(message);
  });
});
