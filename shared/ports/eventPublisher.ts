/** Events Sluice puts on the bus for its users (source `sluice`), so they can chain a next step or alert. */
export interface EventPublisher {
  publish(detailType: string, detail: Record<string, unknown>): Promise<void>;
}

export const SLUICE_EVENT_SOURCE = 'sluice';

export const SluiceDetailType = {
  SetRunCompleted: 'Sluice Job Set Run Completed',
} as const;
export type SluiceDetailType = (typeof SluiceDetailType)[keyof typeof SluiceDetailType];
