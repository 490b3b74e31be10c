import type { Context } from 'aws-lambda';
import { emitPoolGauges } from '../shared/adapters/powertools/poolGauges';
import type { LoadReport } from '../shared/app/loadScheduled';
import type { ReconcileReport } from '../shared/app/reconcile';
import { container } from '../shared/runtime/container';
// Starts, checks or stops runs of any kind: every kind's starter (SDK adapter) is in this function's bundle.
import '../shared/kinds/starterLoaders';

/**
 * Scheduled (every 2 minutes): first the loader sends the scheduled jobs due within the next 15 minutes on their way
 * (shared/app/loadScheduled.ts); then the safety net frees slots of runs that ended without an event, resends lost wake-ups, fills idle slots. Then,
 * whether or not that succeeded, publishes every pool's gauges (slots in use, limit, waiting, overdue leases, how long
 * the first in line waited, paused with jobs waiting: the dashboard and the `lease-past-deadline` and `pool-stuck` alarms). A gauge failure is logged, never thrown: the reconcile work is done
 * and a failed invocation would not redo it; the table failing both would fail the reconcile too (it reads the same
 * items first), which the `reconciler-errors` alarm reports.
 */
export const handler = async (_event: unknown, context: Context): Promise<ReconcileReport & { loader?: LoadReport }> => {
  const { reconciler, loader, logger, metrics, deps } = container();
  logger.addContext(context);
  try {
    // First the loader (jobs due within 15 minutes, from the due index): bounded by its own budget, and a failure of it
    // is logged, not thrown, so the reconcile still runs; the next run loads from the same cursor.
    const loaded = await loader.run().catch((error: unknown) => {
      logger.error('scheduled jobs not loaded', { error: String(error) });
      return undefined;
    });
    if (loaded && (loaded.loaded > 0 || !loaded.finished)) logger.info('scheduled jobs loaded', { ...loaded });
    const report = await reconciler.run();
    logger.info('reconciled', { ...report });
    return { ...report, ...(loaded && { loader: loaded }) };
  } finally {
    await emitPoolGauges(deps, metrics).catch((error: unknown) => logger.error('pool gauges not published', { error: String(error) }));
  }
};
