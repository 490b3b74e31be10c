import { canonicalJson } from '../domain/jobBody';
import { dueAtOf, notBeforeTooFar } from '../domain/notBefore';
import { describeRefusedOverrides, refusedOverrides } from '../domain/overridePolicy';
import { NotBeforeTooFarError, OverrideNotAllowedError } from '../errors';
import { type JobSpec, kindOf } from '../kinds/registry';
import type { SluiceDeps } from './deps';

/**
 * What the stage lets in, checked on every delivery right after the message parses, before anything is written: the
 * overrides its policy allows (none unless allowed), a notBefore at most a year ahead. A refused job is an
 * InvalidJobError: dead-lettered with its reason, as bad input is (nothing registered, no slot held, never retried).
 *
 * A job the ledger already holds with this very spec was let in when it arrived: its later deliveries (a retry, a
 * wake-up, its scheduled copy, the releaser's one-hop start) carry it on even if the policy was narrowed since, since
 * refusing them would leave its record, and any slot it holds, behind. `sluice cancel` stops such a job. The ledger is
 * read only for a job that would be refused.
 */
export async function admit(deps: Pick<SluiceDeps, 'settings' | 'clock' | 'ledger'>, spec: JobSpec): Promise<void> {
  const tooFar = notBeforeTooFar(dueAtOf(spec), deps.clock.now());
  const refused = refusedOverrides(spec.kind, kindOf(spec.kind).overrides?.(spec as never) ?? [], deps.settings.overrides ?? {});
  if (tooFar === undefined && refused.length === 0) return;
  const known = await deps.ledger.get(spec.id);
  if (known && canonicalJson(known.spec) === canonicalJson(spec)) return;
  if (tooFar !== undefined) throw new NotBeforeTooFarError(tooFar);
  throw new OverrideNotAllowedError(`job refused: ${describeRefusedOverrides(refused)}`);
}
