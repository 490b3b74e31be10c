import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { LocalEventBus } from '../../local/bus';
import { countRequests, RequestCounter } from '../../local/infra/requestCounter';
import type { BenchJob } from '../workload';
import type { SimJobApi } from './jobApi';

export interface BackoffGateOptions {
  sqsEndpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  queueName: string;
  bus: LocalEventBus;
  /** Names of this gate's runs start with this (the completion rule ignores other runs). */
  namePrefix: string;
  limit: number;
  /** Visibility timeout, whole seconds: a refused message comes back after this, with no wake-up. */
  backoffSeconds: number;
  /** Parallel pollers, like Lambda's SQS event source (batch of 10, 1 s long polls). */
  pollers: number;
}

export interface BackoffGateReport {
  /** The gate's own SQS requests (receives, deletes), not the producer's sends. */
  requests: RequestCounter;
  /** Gate invocations (one per non-empty batch) and counter-decrement invocations (one per completion event). */
  gateInvocations: number;
  releaseInvocations: number;
  /** Messages received in all (a waiting job is received again after every backoff). */
  received: number;
  /** Receives that returned nothing (not counted as the gate's requests: see Tracer.emptyReceives). */
  emptyReceives: number;
  refused: number;
  /** The most times one job was received; with the usual maxReceiveCount of 10 it would be in the DLQ after that. */
  maxReceiveCount: number;
  wouldDeadLetterAt10: number;
}

/**
 * The counter gate of the GenAI IDP accelerator and the listExecutions gate: a function on the queue admits a job if
 * an in-memory counter is below the limit, else reports the message as failed, so it comes back when its visibility
 * timeout ends. The counter goes down on the run's completion event, but nothing wakes a waiting message.
 */
export interface BackoffGateRun {
  report: BackoffGateReport;
  /** Removes the completion rule and the queue: call it once the runs have ended. */
  cleanup(): Promise<void>;
}

export async function runBackoffGate(api: SimJobApi, jobs: readonly BenchJob[], o: BackoffGateOptions): Promise<BackoffGateRun> {
  const requests = new RequestCounter();
  const sqs = new SQSClient({ endpoint: o.sqsEndpoint, region: o.region, credentials: o.credentials, useQueueUrlAsEndpoint: false });
  const producer = new SQSClient({ endpoint: o.sqsEndpoint, region: o.region, credentials: o.credentials, useQueueUrlAsEndpoint: false });
  countRequests(sqs, 'sqs', requests);
  const { QueueUrl } = await producer.send(
    new CreateQueueCommand({ QueueName: o.queueName, Attributes: { VisibilityTimeout: String(o.backoffSeconds) } }),
  );
  const report: BackoffGateReport = {
    requests,
    gateInvocations: 0,
    releaseInvocations: 0,
    received: 0,
    emptyReceives: 0,
    refused: 0,
    maxReceiveCount: 0,
    wouldDeadLetterAt10: 0,
  };
  const byId = new Map(jobs.map((job) => [job.spec.id, job] as const));
  let inUse = 0;
  const ruleName = `bench-backoff-release-${o.queueName}`;
  o.bus.addRule({
    name: ruleName,
    pattern: { source: ['aws.appflow', 'aws.glue'] },
    target: async (event) => {
      const d = event.detail as Record<string, unknown>;
      const name = String(d['flow-name'] ?? d.jobName ?? '');
      if (!name.startsWith(o.namePrefix)) return;
      report.releaseInvocations++;
      inUse--;
    },
  });
  const cleanup = async () => {
    o.bus.removeRule(ruleName);
    await producer.send(new DeleteQueueCommand({ QueueUrl })).catch(() => undefined);
    sqs.destroy();
    producer.destroy();
  };
  try {
    for (let i = 0; i < jobs.length; i += 10) {
      const chunk = jobs.slice(i, i + 10);
      await producer.send(
        new SendMessageBatchCommand({
          QueueUrl,
          Entries: chunk.map((job, j) => ({ Id: String(j), MessageBody: JSON.stringify(job.spec) })),
        }),
      );
    }
    let started = 0;
    const deadLettered = new Set<string>();
    const poll = async () => {
      while (started < jobs.length) {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['ApproximateReceiveCount'],
          }),
        );
        if (Messages.length === 0) {
          report.emptyReceives++;
          continue;
        }
        report.gateInvocations++;
        report.received += Messages.length;
        const admitted: Array<{ job: BenchJob; receiptHandle: string }> = [];
        for (const m of Messages) {
          const count = Number(m.Attributes?.ApproximateReceiveCount ?? 1);
          report.maxReceiveCount = Math.max(report.maxReceiveCount, count);
          const job = byId.get((JSON.parse(m.Body ?? '{}') as { id?: string }).id ?? '');
          if (!job) continue;
          if (inUse < o.limit) {
            inUse++;
            admitted.push({ job, receiptHandle: m.ReceiptHandle! });
          } else {
            report.refused++;
            if (count >= 10) deadLettered.add(job.spec.id);
          }
        }
        await Promise.all(admitted.map((a) => api.start(a.job)));
        started += admitted.length;
        // Partial batch response: the event source deletes the admitted ones; refused ones wait out their visibility.
        if (admitted.length > 0) {
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl,
              Entries: admitted.map((a, i) => ({ Id: String(i), ReceiptHandle: a.receiptHandle })),
            }),
          );
        }
      }
    };
    await Promise.all(Array.from({ length: o.pollers }, () => poll()));
    report.wouldDeadLetterAt10 = deadLettered.size;
    return { report, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
