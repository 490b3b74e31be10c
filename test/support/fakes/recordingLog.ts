import type { Log, MetricName, Metrics } from '../../../shared/app/deps';

export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  extra: Record<string, unknown>;
}

/** A Log that keeps every entry, so a test can check what the services said (and a failing test can print it). */
export class RecordingLog implements Log {
  readonly entries: LogEntry[] = [];
  debug(message: string, ...extra: Record<string, unknown>[]): void {
    this.push('debug', message, extra);
  }
  info(message: string, ...extra: Record<string, unknown>[]): void {
    this.push('info', message, extra);
  }
  warn(message: string, ...extra: Record<string, unknown>[]): void {
    this.push('warn', message, extra);
  }
  error(message: string, ...extra: Record<string, unknown>[]): void {
    this.push('error', message, extra);
  }
  messages(level?: LogEntry['level']): string[] {
    return this.entries.filter((e) => level === undefined || e.level === level).map((e) => e.message);
  }
  private push(level: LogEntry['level'], message: string, extra: Record<string, unknown>[]): void {
    this.entries.push({ level, message, extra: Object.assign({}, ...extra) as Record<string, unknown> });
  }
}

/** Metrics that add up per name (and per name and pool); durations are kept as they came. */
export class RecordingMetrics implements Metrics {
  readonly totals = new Map<string, number>();
  readonly durations: Array<{ name: MetricName; value: number; pool?: string }> = [];
  count(name: MetricName, value = 1, pool?: string): void {
    this.totals.set(name, (this.totals.get(name) ?? 0) + value);
    if (pool !== undefined) this.totals.set(`${name}:${pool}`, (this.totals.get(`${name}:${pool}`) ?? 0) + value);
  }
  milliseconds(name: MetricName, value: number, pool?: string): void {
    this.durations.push({ name, value, ...(pool !== undefined && { pool }) });
  }
  get(name: MetricName, pool?: string): number {
    return this.totals.get(pool === undefined ? name : `${name}:${pool}`) ?? 0;
  }
}
