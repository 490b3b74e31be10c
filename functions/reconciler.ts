import type { Context } from 'aws-lambda';
import { emitPoolGauges } from '../shared/adapters/powertools/poolGauges';
import type { ReconcileReport } from '../shared/app/reconcile';
import { container } from '../shared/runtime/container';

/**
 * Scheduled safety net: frees slots of runs that ended without an event, resends lost wake-ups, fills idle slots. Then,
 * whether or not that succeeded, publishes every pool's gauges (slots in use, limit, waiting, overdue leases: the
 * dashboard and the `lease-past-deadline` alarm). A gauge failure is logged, never thrown: the reconcile work is done
 * and a failed invocation would not redo it; the table failing both would fail the reconcile too (it reads the same
 * items first), which the `reconciler-errors` alarm reports.
 */
export const handler = async (_event: unknown, context: Context): Promise<ReconcileReport> => {
  const { reconciler, logger, metrics, deps } = container();
  logger.addContext(context);
  try {
    const report = await reconciler.run();
    logger.info('reconciled', { ...report });
    return report;
  } finally {
    await emitPoolGauges(deps, metrics).catch((error: unknown) => logger.error('pool gauges not published', { error: String(error) }));
  }
};
