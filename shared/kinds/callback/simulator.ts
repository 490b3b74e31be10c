import { createHash, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { eventTime } from '../../../local/simulators/events';
import { parseObject, sendJson } from '../../../local/simulators/http';
import { SimServiceError, type SimOutcome } from '../../../local/simulators/model';
import type { RunEngine } from '../../../local/simulators/runEngine';
import type { SimRequest, SimulatedKind } from '../../../local/simulators/simulatedKind';
import { CANCEL_DETAIL_TYPE, START_SOURCE, type TargetMessage, TargetMessageSchema } from './messages';
import { errorStatus } from '../../../local/simulators/errorStatus';
import { SLUICE_EVENT_SOURCE, SluiceDetailType } from '../../ports/eventPublisher';
import { CALLBACK_API_ERRORS, GET_SECRET_VALUE, INVOKE, PUT_EVENTS, SEND_MESSAGE } from './apiErrors';
import { CALLBACK_REPORT } from './reports';
import { CALLBACK_KIND, targetOf } from './spec';
import { SimulatedSecrets } from './simSecrets';

/**
 * The user's system of a callback job, as the simulator plays it: it takes start and cancel messages on any of the
 * three channels Sluice sends them by, through the real SDK clients, and reports each run's end after its simulated
 * run time through the real report channel (a `sluice.callback` event on the bus, which the local stack routes to the
 * callbacks function) with the token its start carried. It dedupes starts by run id, as a well-behaved system must (a
 * repeated start is the same run), and takes a cancel by run id.
 * Fault injection is the engine's: throttled or failed starts (answered in the channel's error shape), dropped,
 * duplicated or delayed reports, failed or timed-out runs, a deleted target.
 *
 * - Lambda Invoke (REST JSON): POST /2015-03-31/functions/NAME/invocations, answered 202 as an Event invoke is; the
 *   run's name is the function's.
 * - EventBridge PutEvents (AWS JSON 1.1, `AWSEvents.PutEvents`): entries from source `sluice`; the run's name is the bus's.
 * - SQS SendMessage (AWS JSON 1.0, `AmazonSQS.SendMessage`): the run's name is the queue's. (In the local stack the
 *   SQS endpoint is the emulator, so this channel is reached only when AWS_ENDPOINT_URL_SQS names the simulator.)
 * - Secrets Manager (AWS JSON 1.1, `secretsmanager.*`): CreateSecret, PutSecretValue and GetSecretValue with versions
 *   and staging labels (simSecrets.ts), where the token key lives when CALLBACK_TOKEN_SECRET_ARN names a secret
 *   (reached when AWS_ENDPOINT_URL_SECRETS_MANAGER names the simulator; the local stack creates its secret there).
 * Every error is answered in its channel's shape, with the status the SDK's model gives it (errorStatus); a fault of
 * PutEvents whose name is a failed entry's ErrorCode (apiErrors.ts: HTTP 200) is answered as PutEvents answers a failed
 * entry, 200 with FailedEntryCount 1.
 */
/** Sluice's own events, put on the bus as they are (not callback starts). */
const OWN_DETAIL_TYPES: readonly string[] = Object.values(SluiceDetailType);
const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;
const PUT_EVENTS_TARGET = 'AWSEvents.PutEvents';
const SEND_MESSAGE_TARGET = 'AmazonSQS.SendMessage';
const GET_SECRET_VALUE_TARGET = 'secretsmanager.GetSecretValue';
const SECRETS_PREFIX = 'secretsmanager.';
const SECRET_OPERATIONS = ['CreateSecret', 'PutSecretValue', 'GetSecretValue'] as const;

type Channel = 'lambda' | 'eventBus' | 'sqs' | 'secrets';

/** Each channel's operation (its error table: shared/kinds/callback/apiErrors.ts). */
const OPERATION = { lambda: INVOKE, eventBus: PUT_EVENTS, sqs: SEND_MESSAGE, secrets: GET_SECRET_VALUE } as const;

const STATUS: Record<SimOutcome, string> = { succeeded: 'SUCCEEDED', failed: 'FAILED', timeout: 'TIMED_OUT', stopped: 'CANCELLED' };
const REASON: Partial<Record<SimOutcome, string>> = {
  failed: 'Simulated failure',
  timeout: 'the work timed out in the system',
  stopped: 'cancelled',
};

const invalid = (name: string, message: string) => new SimServiceError(name, message);

function sendChannelError(res: ServerResponse, channel: Channel, name: string, message: string): void {
  const op = OPERATION[channel];
  const status = errorStatus(op.client, name, CALLBACK_API_ERRORS);
  if (channel === 'lambda') {
    sendJson(res, status, { Type: status >= 500 ? 'Service' : 'User', message }, 'application/json', { 'x-amzn-errortype': name });
  } else if (channel === 'sqs') {
    sendJson(res, status, { __type: `com.amazonaws.sqs#${name}`, message }, 'application/x-amz-json-1.0');
  } else if (channel === 'eventBus' && status === 200) {
    sendJson(res, 200, { FailedEntryCount: 1, Entries: [{ ErrorCode: name, ErrorMessage: message }] }, 'application/x-amz-json-1.1');
  } else {
    sendJson(res, status, { __type: name, message }, 'application/x-amz-json-1.1');
  }
}

/** The channel of a request, by its path or X-Amz-Target. */
function channelOf(req: SimRequest): Channel {
  if (INVOKE_PATH.test(req.path)) return 'lambda';
  if (req.target === SEND_MESSAGE_TARGET) return 'sqs';
  if (req.target?.startsWith(SECRETS_PREFIX)) return 'secrets';
  return 'eventBus';
}

/** The name a call is about (the function, queue, bus or secret), for a fault's namePrefix. */
function calledName(req: SimRequest, channel: Channel): string {
  const input = channel === 'lambda' ? undefined : parseObject(req.body);
  if (channel === 'lambda') return decodeURIComponent(INVOKE_PATH.exec(req.path)?.[1] ?? '');
  if (channel === 'sqs') return /\/([^/]+)$/.exec(String(input?.QueueUrl ?? ''))?.[1] ?? '';
  if (channel === 'secrets') return String(input?.SecretId ?? '');
  const entries = input?.Entries;
  return Array.isArray(entries) ? String((entries[0] as Record<string, unknown> | undefined)?.EventBusName ?? 'default') : '';
}

/** Each simulator's secrets (its engine's). */
const secretStores = new WeakMap<RunEngine, SimulatedSecrets>();

/** The secrets of the simulator whose engine this is (tests count their reads). */
export function secretsOf(engine: RunEngine): SimulatedSecrets {
  let store = secretStores.get(engine);
  if (!store) {
    store = new SimulatedSecrets(engine.ctx);
    secretStores.set(engine, store);
  }
  return store;
}

/** A Secrets Manager call (simSecrets.ts). */
function secretsCall(engine: RunEngine, req: SimRequest, res: ServerResponse): void {
  const operation = req.target!.slice(SECRETS_PREFIX.length);
  const input = parseObject(req.body);
  if (!input) throw invalid('SerializationException', 'Request body is not a JSON object');
  const store = secretsOf(engine);
  const answer =
    operation === 'CreateSecret'
      ? store.create(input)
      : operation === 'PutSecretValue'
        ? store.put(input)
        : operation === 'GetSecretValue'
          ? store.get(input)
          : undefined;
  if (!answer) throw invalid('UnknownOperationException', `the simulator does not play secretsmanager.${operation}`);
  sendJson(res, 200, answer, 'application/x-amz-json-1.1');
}

/** The message a request carries, and the name of the target it reached. */
function readRequest(req: SimRequest): { channel: Channel; name: string; message: TargetMessage; detailType?: string } {
  const invoke = INVOKE_PATH.exec(req.path);
  if (invoke) {
    const functionName = decodeURIComponent(invoke[1]!);
    const name = targetOf({ lambda: functionName }).name;
    return { channel: 'lambda', name, message: messageOf(req.body, 'InvalidRequestContentException') };
  }
  const input = parseObject(req.body);
  if (!input) throw invalid('SerializationException', 'Request body is not a JSON object');
  if (req.target === SEND_MESSAGE_TARGET) {
    const queueUrl = String(input.QueueUrl ?? '');
    const name = /\/([^/]+)$/.exec(queueUrl)?.[1];
    if (!name) throw invalid('InvalidAddress', `The address ${queueUrl} is not valid for this endpoint.`);
    return { channel: 'sqs', name, message: messageOf(String(input.MessageBody ?? ''), 'InvalidMessageContents') };
  }
  const entries = Array.isArray(input.Entries) ? (input.Entries as Array<Record<string, unknown>>) : [];
  const entry = entries[0];
  if (entries.length !== 1 || entry?.Source !== START_SOURCE)
    throw invalid('ValidationException', 'the simulator takes one entry from source sluice');
  const bus = String(entry.EventBusName ?? 'default');
  const detailType = String(entry.DetailType ?? '');
  const message = messageOf(String(entry.Detail ?? ''), 'MalformedDetail');
  if ((message.type === 'cancel') !== (detailType === CANCEL_DETAIL_TYPE))
    throw invalid('ValidationException', `detail type ${detailType} does not fit a ${message.type}`);
  return { channel: 'eventBus', name: targetOf({ eventBus: bus }).name, message, detailType };
}

function messageOf(text: string, errorName: string): TargetMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid(errorName, 'the message is not JSON');
  }
  const parsed = TargetMessageSchema.safeParse(value);
  if (!parsed.success) throw invalid(errorName, `not a start or cancel message: ${parsed.error.issues[0]?.message ?? ''}`);
  return parsed.data;
}

function accepted(res: ServerResponse, channel: Channel, body: string): void {
  if (channel === 'lambda') {
    res.writeHead(202, { 'content-length': 0, 'x-amzn-requestid': randomUUID() });
    res.end();
  } else if (channel === 'sqs') {
    const md5 = createHash('md5').update(body).digest('hex');
    sendJson(res, 200, { MessageId: randomUUID(), MD5OfMessageBody: md5 }, 'application/x-amz-json-1.0');
  } else {
    sendJson(res, 200, { FailedEntryCount: 0, Entries: [{ EventId: randomUUID() }] }, 'application/x-amz-json-1.1');
  }
}

/**
 * Sluice's own events (source `sluice`, not a callback start or cancel: a job set run completed) are the local
 * EventBridge's too: put on the local bus as they are, where users' rules (and the tests) see them.
 */
function ownEvents(engine: RunEngine, req: SimRequest): boolean {
  if (req.target !== PUT_EVENTS_TARGET) return false;
  const entries = (parseObject(req.body)?.Entries ?? []) as Array<Record<string, unknown>>;
  // By detail type: a callback start may carry any detail type its spec names.
  const own = (e: Record<string, unknown>) => e.Source === SLUICE_EVENT_SOURCE && OWN_DETAIL_TYPES.includes(String(e.DetailType));
  if (entries.length === 0 || !entries.every(own)) return false;
  for (const entry of entries) {
    engine.putOnBus({
      version: '0',
      id: randomUUID(),
      'detail-type': String(entry.DetailType),
      source: String(entry.Source),
      account: engine.ctx.account,
      time: eventTime(Date.now()),
      region: engine.ctx.region,
      resources: [],
      detail: JSON.parse(String(entry.Detail ?? '{}')) as Record<string, unknown>,
    });
  }
  return true;
}

async function handle(engine: RunEngine, req: SimRequest, res: ServerResponse): Promise<void> {
  const channel = channelOf(req);
  try {
    if (ownEvents(engine, req)) return accepted(res, channel, '');
    // Faults are injected into the calls Sluice makes (GetSecretValue), not the tests' own (CreateSecret, PutSecretValue).
    if (channel !== 'secrets' || req.target === GET_SECRET_VALUE_TARGET)
      engine.failCall(CALLBACK_KIND, OPERATION[channel].operation, calledName(req, channel));
    if (channel === 'secrets') return secretsCall(engine, req, res);
    const { name, message } = readRequest(req);
    if (message.type === 'start') {
      const args = {
        jobId: message.jobId,
        token: message.token,
        channel,
        payload: JSON.stringify(message.payload ?? null),
        timeoutSeconds: String(message.timeoutSeconds),
        ...(message.heartbeatSeconds !== undefined && { heartbeatSeconds: String(message.heartbeatSeconds) }),
      };
      // Deduped by run id: a start sent again (with the same token, or one made again with a rotated key) is that run.
      await engine.start(CALLBACK_KIND, name, args, message.runId);
    } else {
      // A cancel of a run the system has: it stops the work and reports it failed (cancelled). Others are ignored.
      const run = engine.find(CALLBACK_KIND, message.runId);
      if (run && run.endedAt === undefined) engine.stop(CALLBACK_KIND, run.name, [run.executionId]);
    }
    const body = channel === 'sqs' ? String(parseObject(req.body)?.MessageBody ?? '') : '';
    accepted(res, channel, body);
  } catch (e) {
    if (e instanceof SimServiceError) sendChannelError(res, channel, e.errorName, e.message);
    else sendChannelError(res, channel, 'InternalFailure', e instanceof Error ? e.message : String(e));
  }
}

export const simulated: SimulatedKind = {
  kind: CALLBACK_KIND,
  serves: (req) =>
    (req.method === 'POST' && INVOKE_PATH.test(req.path)) ||
    req.target === PUT_EVENTS_TARGET ||
    req.target === SEND_MESSAGE_TARGET ||
    SECRET_OPERATIONS.some((operation) => req.target === `${SECRETS_PREFIX}${operation}`),
  handle,
  sendError: (res, name, message) =>
    sendJson(res, errorStatus(INVOKE.client, name, CALLBACK_API_ERRORS), { __type: name, message }, 'application/json'),
  status: (phase, outcome) => (phase === 'ended' ? STATUS[outcome ?? 'failed'] : phase === 'stopping' ? 'CANCELLING' : 'RUNNING'),
  // The run id the start message names: Sluice knows it before the system answers (an Event invoke answers nothing).
  newExecutionId: (_name, _ctx, runId) => runId ?? randomUUID(),
  endEvent(ctx, { run, outcome }) {
    const reason = REASON[outcome];
    return {
      version: '0',
      id: randomUUID(),
      'detail-type': CALLBACK_REPORT.completed,
      source: CALLBACK_REPORT.source,
      account: ctx.account,
      time: eventTime(run.endedAt!),
      region: ctx.region,
      resources: [],
      detail: { token: run.args.token, outcome: outcome === 'succeeded' ? 'succeeded' : 'failed', ...(reason && { reason }) },
    };
  },
  // A system asked for heartbeats sends one every quarter of the allowed silence while the work runs.
  progress: {
    everyMs: (run) => (run.args.heartbeatSeconds === undefined ? undefined : (Number(run.args.heartbeatSeconds) * 1000) / 4),
    event: (ctx, run) => ({
      version: '0',
      id: randomUUID(),
      'detail-type': CALLBACK_REPORT.heartbeat,
      source: CALLBACK_REPORT.source,
      account: ctx.account,
      time: eventTime(Date.now()),
      region: ctx.region,
      resources: [],
      detail: { token: run.args.token },
    }),
  },
  checkName: () => undefined,
  jobIdOf: (run) => run.args.jobId,
  notFound: (name) => new SimServiceError('ResourceNotFoundException', `Function not found: ${name}`),
  // A system that dedupes by run id: a repeated start is the run it has, running or over.
  repeat: () => 'replay',
};
