/**
 * The name of a start attempt (JobRecord.attempt): who makes it (a delivery's SQS message id, or the releaser's hand-off
 * of a job) and a random token, since one owner may make two at once (SQS may deliver one message twice at once).
 * `random` is the caller's source in [0, 1).
 */
export function startAttempt(owner: string, random: () => number): string {
  return `${owner}/${Math.floor(random() * 2 ** 32).toString(36)}`;
}

/**
 * Who wrote a job's end (JobRecord.endedBy): a token of the writing call, so a writer whose answer was lost (the SDK's
 * retry meets its own effect as a failed condition) knows the end it finds for its own (wroteMove).
 */
export function endWriter(random: () => number): string {
  return startAttempt('end', random);
}
