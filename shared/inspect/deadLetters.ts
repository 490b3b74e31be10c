import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { MESSAGE_ID_ATTRIBUTE, REASON_ATTRIBUTE, TRUNCATED_FROM_ATTRIBUTE } from '../adapters/sqs/jobQueue';
import { targetNameOf } from './targetName';

/** One message of the dead-letter queue, as `sluice dlq list` shows it. */
export interface DeadLetter {
  messageId: string;
  /** the job id from the `sluice-jobId` attribute or the body's `id`; undefined for a message that is not a job */
  jobId?: string;
  pool?: string;
  /** what the job starts (its kind's targetName), from the body; undefined for a body that is not a job */
  target?: string;
  /** `sluice-reason`; undefined for a message SQS moved after maxReceiveCount failed receives */
  reason?: string;
  /** epoch ms it was sent to the DLQ */
  sentAt: number;
  body: string;
  /**
   * The id SQS gave the message when it was sent to the job queue (`sluice-messageId`), for a message dead-lettered as
   * it was delivered: the sender's own message, its body byte for byte.
   */
  deliveredAs?: string;
  /** the original body's size, when the copy had to be cut to fit SQS's 1 MiB beside its attributes (never redriven) */
  truncatedFrom?: number;
  receiptHandle: string;
}

/** Receives at most 10 a call; the messages seen are hidden this long and made visible again at once after. */
const PEEK_VISIBILITY_SECONDS = 30;

/**
 * Every message in the DLQ (up to `max`), without taking them: each receive hides what it got so the next receive gets
 * others, and at the end all are made visible again (ChangeMessageVisibility 0). Their receive counts go up by one,
 * which a DLQ has no use for.
 */
export async function peekDeadLetters(sqs: SQSClient, dlqUrl: string, max = 1000): Promise<DeadLetter[]> {
  return withDeadLetters(sqs, dlqUrl, max, async (letters) => ({ result: letters, deleted: new Set<string>() }));
}

/**
 * Receives every message of the DLQ (up to `max`, each hidden meanwhile, so its receipt handle is the latest), lets
 * `act` handle them and say which it deleted, and makes the others visible again at once.
 */
export async function withDeadLetters<T>(
  sqs: SQSClient,
  dlqUrl: string,
  max: number,
  act: (letters: DeadLetter[]) => Promise<{ result: T; deleted: Set<string> }>,
): Promise<T> {
  const seen = new Map<string, DeadLetter>();
  let deleted = new Set<string>();
  try {
    while (seen.size < max) {
      const { Messages } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: dlqUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          VisibilityTimeout: PEEK_VISIBILITY_SECONDS,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['SentTimestamp'],
        }),
      );
      if (!Messages?.length) break;
      for (const m of Messages) if (m.MessageId && m.ReceiptHandle) seen.set(m.MessageId, deadLetterOf(m));
    }
    const letters = [...seen.values()].sort((a, b) => a.sentAt - b.sentAt || a.messageId.localeCompare(b.messageId));
    const outcome = await act(letters);
    deleted = outcome.deleted;
    return outcome.result;
  } finally {
    await release(
      sqs,
      dlqUrl,
      [...seen.values()].filter((letter) => !deleted.has(letter.messageId)),
    );
  }
}

function deadLetterOf(m: {
  MessageId?: string;
  ReceiptHandle?: string;
  Body?: string;
  Attributes?: Record<string, string>;
  MessageAttributes?: Record<string, { StringValue?: string }>;
}): DeadLetter {
  const attribute = (name: string) => m.MessageAttributes?.[name]?.StringValue;
  const body = m.Body ?? '';
  const truncated = attribute(TRUNCATED_FROM_ATTRIBUTE);
  const spec = parseObject(body);
  const jobId = attribute('sluice-jobId') ?? (typeof spec?.id === 'string' ? spec.id : undefined);
  const pool = attribute('sluice-pool') ?? (typeof spec?.pool === 'string' ? spec.pool : undefined);
  const deliveredAs = attribute(MESSAGE_ID_ATTRIBUTE);
  const target = typeof spec?.kind === 'string' ? targetNameOf(spec.kind, spec) : undefined;
  return {
    messageId: m.MessageId!,
    ...(jobId !== undefined && { jobId }),
    ...(pool !== undefined && { pool }),
    ...(target !== undefined && { target }),
    ...(attribute(REASON_ATTRIBUTE) !== undefined && { reason: attribute(REASON_ATTRIBUTE) }),
    ...(deliveredAs !== undefined && { deliveredAs }),
    sentAt: Number(m.Attributes?.SentTimestamp ?? 0),
    body,
    ...(truncated !== undefined && { truncatedFrom: Number(truncated) }),
    receiptHandle: m.ReceiptHandle!,
  };
}

export function parseObject(body: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

async function release(sqs: SQSClient, dlqUrl: string, letters: DeadLetter[]): Promise<void> {
  for (let i = 0; i < letters.length; i += 10) {
    const chunk = letters.slice(i, i + 10);
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: dlqUrl,
        Entries: chunk.map((letter, j) => ({ Id: String(j), ReceiptHandle: letter.receiptHandle, VisibilityTimeout: 0 })),
      }),
    );
  }
}

/**
 * Sends a dead letter's body, unchanged (byte for byte the body the job queue delivered, for a message dead-lettered on
 * arrival), to the job queue, then deletes it from the DLQ by the receipt handle of the
 * receive that hides it now (a crash between the two: sent twice, one job all the same, by its id).
 */
export async function resend(sqs: SQSClient, queueUrl: string, dlqUrl: string, letter: DeadLetter): Promise<void> {
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: letter.body }));
  await sqs.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: letter.receiptHandle }));
}
