/** Events Sluice puts on the bus for its users (source `sluice`), so they can chain a next step or alert. */
export interface EventPublisher {
  publish(detailType: string, detail: Record<string, unknown>): Promise<void>;
}

export const SLUICE_EVENT_SOURCE = 'sluice';

export const SluiceDetailType = {
  SetRunCompleted: 'Sluice Job Set Run Completed',
  /** One job reached its end: succeeded, failed, dead-lettered or cancelled (shared/app/jobEndEvent.ts). */
  JobEnded: 'Sluice Job Ended',
} as const;
export type SluiceDetailType = (typeof SluiceDetailType)[keyof typeof SluiceDetailType];
