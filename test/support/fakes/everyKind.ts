import { type JobKind, KINDS } from '../../../shared/kinds/registry';

/**
 * A value for every registered kind (shared/kinds/registry.ts): `given` where it names the kind, `make(kind)` for the
 * rest. Fakes and settings built with it need no change when a kind is added.
 */
export function everyKind<T>(make: (kind: JobKind) => T, given: Partial<Record<JobKind, T>> = {}): Record<JobKind, T> {
  return Object.fromEntries(KINDS.map(({ kind }) => [kind, given[kind] ?? make(kind)])) as Record<JobKind, T>;
}

/** Each kind's entry of `record` through `fn` (a wrapper around every fake starter, say). */
export function mapKinds<T, U>(record: Record<JobKind, T>, fn: (value: T, kind: JobKind) => U): Record<JobKind, U> {
  return Object.fromEntries(Object.entries(record).map(([kind, value]) => [kind, fn(value as T, kind as JobKind)])) as Record<JobKind, U>;
}
