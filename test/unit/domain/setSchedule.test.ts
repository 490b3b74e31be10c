import { fireTimes } from '../../../shared/domain/setSchedule';

const at = (iso: string) => Date.parse(iso);
const iso = (times: number[]) => times.map((t) => new Date(t).toISOString());

describe('when a job set fires (EventBridge Scheduler expressions)', () => {
  test('cron at 02:00 Paris, every day: 01:00Z in winter, 00:00Z in summer (the time zone, DST included)', () => {
    expect(iso(fireTimes('cron(0 2 * * ? *)', 'Europe/Paris', at('2026-11-24T00:00:00Z'), at('2026-11-26T00:00:00Z')))).toEqual([
      '2026-11-24T01:00:00.000Z',
      '2026-11-25T01:00:00.000Z',
    ]);
    expect(iso(fireTimes('cron(0 2 * * ? *)', 'Europe/Paris', at('2026-06-30T12:00:00Z'), at('2026-07-01T12:00:00Z')))).toEqual(['2026-07-01T00:00:00.000Z']);
  });

  test("day-of-week numbers are EventBridge's (1 = Sunday): cron(0 2 ? * 6 *) is Fridays, as is FRI", () => {
    const fridays = fireTimes('cron(0 2 ? * 6 *)', 'UTC', at('2026-11-23T00:00:00Z'), at('2026-12-06T00:00:00Z'));
    expect(iso(fridays)).toEqual(['2026-11-27T02:00:00.000Z', '2026-12-04T02:00:00.000Z']);
    expect(fireTimes('cron(0 2 ? * FRI *)', 'UTC', at('2026-11-23T00:00:00Z'), at('2026-12-06T00:00:00Z'))).toEqual(fridays);
    expect(iso(fireTimes('cron(0 2 ? * 2-6 *)', 'UTC', at('2026-11-23T00:00:00Z'), at('2026-11-30T00:00:00Z')))).toHaveLength(5);
  });

  test('the year field limits the fires', () => {
    expect(fireTimes('cron(0 0 1 * ? 2027)', 'UTC', at('2026-11-01T00:00:00Z'), at('2027-02-15T00:00:00Z')).map((t) => new Date(t).getUTCFullYear())).toEqual([2027, 2027]);
  });

  test('rate: every N from its anchor, after the given time', () => {
    expect(iso(fireTimes('rate(6 hours)', 'UTC', at('2026-11-24T00:00:00Z'), at('2026-11-25T00:00:00Z'), { anchor: at('2026-11-23T23:00:00Z') }))).toEqual([
      '2026-11-24T05:00:00.000Z',
      '2026-11-24T11:00:00.000Z',
      '2026-11-24T17:00:00.000Z',
      '2026-11-24T23:00:00.000Z',
    ]);
  });

  test('a cron with both day fields set, or neither "?", is refused', () => {
    expect(() => fireTimes('cron(0 2 * * * *)', 'UTC', 0, 1)).toThrow("exactly one of day-of-month and day-of-week must be '?'");
    expect(() => fireTimes('cron(0 2 ? * ? *)', 'UTC', 0, 1)).toThrow('exactly one');
  });
});
