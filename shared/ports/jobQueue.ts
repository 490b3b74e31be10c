/** The job queue seen from the domain: send a job (again), or give up on a message with a reason. */
export interface JobQueue {
  /**
   * Sends a job spec (JSON) to the job queue, after `delaySeconds` (0..900). `reserved` marks a job let in with a slot
   * already reserved for it: a hint that saves the acquirer two writes bound to fail, never trusted on its own.
   */
  send(body: string, delaySeconds?: number, options?: { reserved?: boolean }): Promise<void>;
  /** Sends many job specs at once (SQS batches of 10), each with no delay; throws if any could not be sent. */
  sendAll(bodies: readonly string[]): Promise<void>;
  /** Sends a message that can never run to the dead-letter queue, with why. */
  deadLetter(body: string, reason: string, context?: Record<string, string>): Promise<void>;
}
