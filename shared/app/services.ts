import { Acquirer } from './acquireJob';
import { CompleteRun } from './completeRun';
import { HandOffStart, type SluiceDeps } from './deps';
import { Loader } from './loadScheduled';
import { PoolAdmin } from './poolAdmin';
import { Reconciler } from './reconcile';

export interface SluiceServices {
  acquirer: Acquirer;
  /** The releaser's service: with HandOffStart.Releaser it starts the job a released slot goes to itself. */
  completeRun: CompleteRun;
  reconciler: Reconciler;
  poolAdmin: PoolAdmin;
  /** Sends scheduled jobs due within 15 minutes on their way (run by the reconciler's function, before it reconciles). */
  loader: Loader;
}

/**
 * The services over one set of dependencies, wired as the functions run them (the composition root, the local stack,
 * the fakes and the interleaving explorer all use this, so tests exercise the configured hand-off path).
 */
export function sluiceServices(deps: SluiceDeps): SluiceServices {
  const acquirer = new Acquirer(deps);
  const startHere =
    deps.settings.handOffStart === HandOffStart.Releaser
      ? async (waiter: Parameters<Acquirer['startHandedOff']>[0], handedOffAt: number, attempt: string | undefined) => {
          await acquirer.startHandedOff(waiter, handedOffAt, attempt);
        }
      : undefined;
  return {
    acquirer,
    completeRun: new CompleteRun(deps, startHere),
    // The reconciler sends wake-ups: its role asks job APIs about runs, it does not start them.
    reconciler: new Reconciler(deps),
    poolAdmin: new PoolAdmin(deps),
    loader: new Loader(deps),
  };
}
