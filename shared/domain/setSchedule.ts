import { CronExpressionParser } from 'cron-parser';
import { InvalidJobSetsError } from '../errors';

/**
 * When a job set's schedule fires, from its EventBridge Scheduler expression and time zone. Pure (the times asked
 * about are given): the local stack fires sets on compressed time with it, and the sets file is checked with it.
 *
 * EventBridge cron is `cron(minutes hours day-of-month month day-of-week year)`, `?` for "any" in one of the two day
 * fields, day-of-week 1-7 from Sunday. cron-parser takes five fields, day-of-week 0-7 from Sunday: the year is checked
 * separately and day-of-week numbers shift down by one (`6#3`, the third Friday, becomes `5#3`).
 */

const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const CRON = /^cron\((\S+) (\S+) (\S+) (\S+) (\S+) (\S+)\)$/;
const UNIT_MS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** The fire times in (after, until], epoch ms, at most `max`. A rate schedule counts from `anchor` (its creation). */
export function fireTimes(
  schedule: string,
  timezone: string,
  after: number,
  until: number,
  options: { anchor?: number; max?: number } = {},
): number[] {
  const max = options.max ?? 10_000;
  const rate = RATE.exec(schedule);
  if (rate) {
    const every = Number(rate[1]) * UNIT_MS[rate[2]!.replace(/s$/, '')]!;
    if (every <= 0) throw new InvalidJobSetsError(`schedule '${schedule}': the rate must be at least 1`);
    const anchor = options.anchor ?? after;
    const times: number[] = [];
    for (let t = anchor + Math.max(1, Math.ceil((after + 1 - anchor) / every)) * every; t <= until && times.length < max; t += every)
      times.push(t);
    return times;
  }
  const cron = CRON.exec(schedule);
  if (!cron) throw new InvalidJobSetsError(`schedule '${schedule}' is neither rate(...) nor cron(...)`);
  const [, minutes, hours, dom, month, dow, year] = cron as unknown as [string, string, string, string, string, string, string];
  if ((dom === '?') === (dow === '?'))
    throw new InvalidJobSetsError(`schedule '${schedule}': exactly one of day-of-month and day-of-week must be '?'`);
  const expression = [minutes, hours, dom === '?' ? '*' : dom, month, dow === '?' ? '*' : shiftDayOfWeek(dow)].join(' ');
  let interval;
  try {
    interval = CronExpressionParser.parse(expression, { currentDate: new Date(after), endDate: new Date(until), tz: timezone });
  } catch (error) {
    throw new InvalidJobSetsError(`schedule '${schedule}': ${(error as Error).message}`, { cause: error });
  }
  const times: number[] = [];
  while (times.length < max && interval.hasNext()) {
    const t = interval.next().getTime();
    if (t > until) break;
    if (yearMatches(year, new Date(t).getUTCFullYear())) times.push(t);
  }
  return times;
}

/** EventBridge's day-of-week numbers (1 = Sunday) as cron-parser's (0 = Sunday); names and `#n` stay. */
function shiftDayOfWeek(field: string): string {
  return field.replace(/(^|[^#\d])(\d+)/g, (_m, before: string, day: string) => `${before}${Number(day) - 1}`);
}

function yearMatches(field: string, year: number): boolean {
  if (field === '*') return true;
  return field.split(',').some((part) => {
    const [from, to] = part.split('-').map(Number);
    return to === undefined ? year === from : year >= from! && year <= to;
  });
}
