import type { Context } from 'aws-lambda';
import type { ReconcileReport } from '../shared/app/reconcile';
import { container } from '../shared/runtime/container';

/** Scheduled safety net: frees slots of runs that ended without an event, resends lost wake-ups, fills idle slots. */
export const handler = async (_event: unknown, context: Context): Promise<ReconcileReport> => {
  const { reconciler, logger } = container();
  logger.addContext(context);
  const report = await reconciler.run();
  logger.info('reconciled', { ...report });
  return report;
};
