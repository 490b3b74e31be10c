/**
 * How long Batch keeps a job after it ended: about a day. ListJobs and DescribeJobs no longer return it after that, as
 * users of the API report ("AWS only returns information for AWS Batch jobs in the SUCCEEDED or FAILED state over the
 * last 24 hours": https://www.mathworks.com/help/parallel-computing/parallel.cluster.generic.awsbatch.getbatchjobinfo.html);
 * the Batch API reference (API_ListJobs.html, API_DescribeJobs.html) gives no figure, so the simulator takes the
 * reported day as the longest, and forgets ended jobs after it.
 */
export const ENDED_JOB_LISTED_MS = 24 * 3600_000;

/** Whether Batch still lists a job that ended at `endedAt` (epoch ms; undefined: it has not ended) at `now`. */
export const isListed = (endedAt: number | undefined, now: number): boolean => endedAt === undefined || now - endedAt < ENDED_JOB_LISTED_MS;
