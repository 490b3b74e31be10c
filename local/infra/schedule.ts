/** Milliseconds between runs of an EventBridge `rate(...)` expression. Cron expressions are not supported locally. */
export function rateToMs(expression: string): number {
  const match = /^rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)$/.exec(expression.trim());
  if (!match) throw new Error(`local scheduler supports rate(N minutes|hours|days) only, got ${expression}`);
  const n = Number(match[1]);
  const unit = match[2]!.replace(/s$/, '');
  const ms = { minute: 60_000, hour: 3_600_000, day: 86_400_000 }[unit as 'minute' | 'hour' | 'day'];
  return n * ms;
}
