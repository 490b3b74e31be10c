import { once } from 'node:events';
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type AnsweredRequest, type Dashboard, type DashboardOptions, startDashboard } from '../../../shared/dashboard/server';
import { ENDED_INDEX } from '../../../shared/inspect/viewSnapshot';
import { launchChromium } from '../../support/browser';
import { type Resident, startResident } from '../../support/residentStack';
import { waitFor } from '../../support/waitFor';

/**
 * What a web page of another origin, open in the user's browser (Chromium with web security on), can do to the
 * dashboard and to the local stack's emulators: nothing. The page is served by a second HTTP server on 127.0.0.1 at
 * another port (a page on 127.0.0.1 is the worst case: no Private Network Access check stands between it and
 * loopback); its script runs `fetch` in that origin, as an attacker's would. Each test checks both sides: what the page
 * got (an opaque answer or a network error, never data), and what the server did (its answers, and the AWS calls its
 * clients made, counted by a middleware: a Scan or a DLQ call is a state read).
 */

let tmp: string;
let resident: Resident;
let attacker: http.Server;
let attackerOrigin: string;
let browser: Browser;
let context: BrowserContext;
const REBOUND = 'rebound.test';

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'sluice-cross-origin-'));
  resident = await startResident(
    ['--sqs-port', '0', '--dynamodb-port', '0', '--jobapi-port', '0', '--pool', 'default=1'],
    path.join(tmp, 'local.env'),
  );
  attacker = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>another site</title><p>nothing to see</p>');
  });
  attacker.listen(0, '127.0.0.1');
  await once(attacker, 'listening');
  attackerOrigin = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  // DNS rebinding, as the browser sees it: a name of the attacker's that resolves to 127.0.0.1.
  browser = await launchChromium([`--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`]);
  // Chromium runs as a single process here: closing a page's own context ends it, so every page is one context's.
  context = await browser.newContext();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  attacker?.close();
  if (resident) expect(await resident.stop()).toBe(0);
  await rm(tmp, { recursive: true, force: true });
}, 30_000);

interface Opened {
  dashboard: Dashboard;
  port: number;
  /** the AWS calls the dashboard's clients made, by command name */
  calls: string[];
  /** the calls that read state for a view: a Scan of the table, any call on the DLQ (the ended index: endedReads) */
  stateReads(): string[];
  /** the Queries of the ended index (one pass of readJobsView: ENDED_QUERIES_A_PASS) */
  endedReads(): number;
  answered: AnsweredRequest[];
  close(): Promise<void>;
}

/** A dashboard in this process (as `sluice dashboard` starts it) on the resident stack, with its AWS calls counted. */
async function openDashboard(options: DashboardOptions = {}): Promise<Opened> {
  const calls: string[] = [];
  const endpoints = { region: resident.vars.AWS_REGION!, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  const ddb = new DynamoDBClient({ ...endpoints, endpoint: resident.vars.AWS_ENDPOINT_URL_DYNAMODB });
  const sqs = new SQSClient({ ...endpoints, endpoint: resident.vars.AWS_ENDPOINT_URL_SQS });
  for (const client of [ddb, sqs] as Array<{ middlewareStack: DynamoDBClient['middlewareStack'] }>)
    client.middlewareStack.add(
      (next, context) => (args) => {
        const index = (args.input as { IndexName?: string }).IndexName;
        calls.push(index === undefined ? context.commandName! : `${context.commandName!} ${index}`);
        return next(args);
      },
      { step: 'initialize', name: 'countCalls' },
    );
  const answered: AnsweredRequest[] = [];
  const dashboard = await startDashboard(
    {
      doc: DynamoDBDocumentClient.from(ddb, { marshallOptions: { removeUndefinedValues: true } }),
      sqs,
      table: resident.vars.SLUICE_TABLE!,
      queueUrl: resident.vars.SLUICE_QUEUE_URL!,
      dlqUrl: resident.vars.SLUICE_DLQ_URL!,
    },
    0,
    { ...options, onRequest: (request) => answered.push(request) },
  );
  return {
    dashboard,
    port: Number(new URL(dashboard.url).port),
    calls,
    stateReads: () => calls.filter((name) => /^Scan|Message|QueueAttributes/.test(name)),
    endedReads: () => calls.filter((name) => name === `QueryCommand ${ENDED_INDEX}`).length,
    answered,
    async close() {
      await dashboard.close();
      ddb.destroy();
      sqs.destroy();
    },
  };
}

/**
 * One pass of readJobsView over the ended index: 16 shards of each UTC day the last 24 hours touch (always two) and of
 * the 15 days the last 14 touch (dead-lettered jobs); each bucket holds less than a page here.
 */
const ENDED_QUERIES_A_PASS = 16 * 2 + 16 * 15;

/** Clients of the test's own, not counted. */
const region = () => ({ region: resident.vars.AWS_REGION!, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
const ownDoc = () => DynamoDBDocumentClient.from(new DynamoDBClient({ ...region(), endpoint: resident.vars.AWS_ENDPOINT_URL_DYNAMODB }));
const ownSqs = () => new SQSClient({ ...region(), endpoint: resident.vars.AWS_ENDPOINT_URL_SQS });

/** The page's token, as the dashboard's own page has it. */
async function tokenOf(url: string): Promise<string> {
  const html = await (await fetch(url)).text();
  return (JSON.parse(/<script type="application\/json" id="context">(.*?)<\/script>/.exec(html)![1]!) as { token: string }).token;
}

/** A page of the attacker's origin. */
async function attackerPage(): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${attackerOrigin}/`);
  return page;
}

interface Attempt {
  label: string;
  url: string;
  init?: { method?: string; mode?: 'cors' | 'no-cors'; headers?: Record<string, string>; body?: string };
}
type Outcome = { label: string; type: string; status: number; body: string } | { label: string; error: string };

/** Runs each fetch in the page, one after the other: what the page's script could read of each answer. */
function attempt(page: Page, attempts: Attempt[]): Promise<Outcome[]> {
  return page.evaluate(async (list) => {
    const outcomes = [];
    for (const { label, url, init } of list) {
      try {
        const res = await fetch(url, init);
        outcomes.push({ label, type: res.type, status: res.status, body: await res.text() });
      } catch (error) {
        outcomes.push({ label, error: (error as Error).name });
      }
    }
    return outcomes;
  }, attempts);
}

// Per the Fetch standard, a no-cors answer is opaque to the script (type "opaque", status 0, empty body)
// (https://fetch.spec.whatwg.org/#concept-filtered-response-opaque), and a CORS request the server does not allow, or a
// no-cors answer with Cross-Origin-Resource-Policy same-origin (every answer of the dashboard), fails with a TypeError
// (https://fetch.spec.whatwg.org/#cross-origin-resource-policy-header).
const OPAQUE = { type: 'opaque', status: 0, body: '' };
const BLOCKED = { error: 'TypeError' };

describe('the dashboard and a page of another origin', () => {
  test('no-cors and CORS requests to /api/* and the page: the page reads nothing, the dashboard reads no state and changes nothing', async () => {
    const opened = await openDashboard();
    try {
      const page = await attackerPage();
      const api = `${opened.dashboard.url}api`;
      const outcomes = await attempt(page, [
        // A no-cors GET carries no Origin header (only CORS requests and methods other than GET and HEAD do), and no
        // header that is not CORS-safelisted: the token check is what refuses it.
        { label: 'no-cors GET state', url: `${api}/state`, init: { mode: 'no-cors' } },
        { label: 'CORS GET state', url: `${api}/state` },
        // A header of its own makes it a preflighted request: the OPTIONS is refused, the GET never sent.
        { label: 'CORS GET state with a guessed token', url: `${api}/state`, init: { headers: { 'x-sluice-token': 'guess' } } },
        {
          label: 'no-cors POST limit',
          url: `${api}/pools/default/limit`,
          init: { method: 'POST', mode: 'no-cors', body: '{"limit":7}' },
        },
        {
          label: 'CORS POST redrive',
          url: `${api}/dlq/redrive`,
          init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id":"x"}' },
        },
        { label: 'no-cors GET the page', url: opened.dashboard.url, init: { mode: 'no-cors' } },
      ]);
      await page.close();

      // Server side first: no state was read for any of them (before the token was required on every /api/ route,
      // the no-cors and the CORS GET each read the whole table and received the DLQ).
      expect(opened.stateReads()).toEqual([]);
      expect(outcomes).toEqual([
        { label: 'no-cors GET state', ...BLOCKED },
        { label: 'CORS GET state', ...BLOCKED },
        { label: 'CORS GET state with a guessed token', ...BLOCKED },
        { label: 'no-cors POST limit', ...BLOCKED },
        { label: 'CORS POST redrive', ...BLOCKED },
        { label: 'no-cors GET the page', ...BLOCKED },
      ]);
      const origin = attackerOrigin;
      expect(opened.answered.map(({ method, path, status, refused, origin: from }) => ({ method, path, status, refused, from }))).toEqual([
        { method: 'GET', path: '/api/state', status: 403, refused: 'token', from: undefined },
        { method: 'GET', path: '/api/state', status: 403, refused: 'origin', from: origin },
        { method: 'OPTIONS', path: '/api/state', status: 403, refused: 'origin', from: origin },
        { method: 'POST', path: '/api/pools/default/limit', status: 403, refused: 'origin', from: origin },
        { method: 'OPTIONS', path: '/api/dlq/redrive', status: 403, refused: 'origin', from: origin },
        { method: 'GET', path: '/', status: 200, refused: undefined, from: undefined },
      ]);
      const pool = await ownDoc().send(new GetCommand({ TableName: resident.vars.SLUICE_TABLE, Key: { pk: 'POOL#default', sk: 'POOL' } }));
      expect(pool.Item?.limit).toBe(1);

      // The refused preflight carries no CORS header at all.
      const preflight = await fetch(`${api}/state`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-sluice-token' },
      });
      expect(preflight.status).toBe(403);
      expect([...preflight.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    } finally {
      await opened.close();
    }
  }, 120_000);

  test('DNS rebinding: a page on a name resolving to 127.0.0.1 gets 421 for the page and for /api/, even with the token', async () => {
    const opened = await openDashboard();
    try {
      const token = await tokenOf(opened.dashboard.url);
      const page = await context.newPage();
      const response = await page.goto(`http://${REBOUND}:${opened.port}/`);
      expect(response?.status()).toBe(421);
      expect(await page.content()).not.toContain(token);
      // The attacker's script, same-origin with the rebound name: it could read any answer, so none may hold data.
      const outcomes = await attempt(page, [
        { label: 'state', url: '/api/state', init: { headers: { 'x-sluice-token': token } } },
        { label: 'page', url: '/' },
      ]);
      await page.close();
      expect(opened.stateReads()).toEqual([]);
      expect(outcomes).toEqual([
        { label: 'state', type: 'basic', status: 421, body: `{"error":"this dashboard answers only to 127.0.0.1:${opened.port}"}` },
        { label: 'page', type: 'basic', status: 421, body: `{"error":"this dashboard answers only to 127.0.0.1:${opened.port}"}` },
      ]);
      // Every request to the rebound name was refused (Chromium sends each twice: it retries once on a 421).
      const rebound = opened.answered.filter((a) => a.host === `${REBOUND}:${opened.port}`);
      // A favicon the browser may ask for is refused the same way.
      const answers = new Set(rebound.map((a) => `${a.method} ${a.path} ${a.status} ${a.refused}`));
      answers.delete('GET /favicon.ico 421 host');
      expect(answers).toEqual(new Set(['GET / 421 host', 'GET /api/state 421 host']));
    } finally {
      await opened.close();
    }
  }, 120_000);

  test('its own page works with web security on; many requests share one state read', async () => {
    const opened = await openDashboard({ refreshMs: 600_000, jobsRefreshMs: 600_000 });
    try {
      const page = await context.newPage();
      await page.goto(opened.dashboard.url);
      await page.locator('#pools tr[data-pool="default"] .limit').filter({ hasText: /^1$/ }).waitFor({ timeout: 60_000 });
      // Ten more at once, from the page with its token, as ten open tabs would.
      const token = await tokenOf(opened.dashboard.url);
      const answers = await page.evaluate(async (token) => {
        const all = await Promise.all(
          Array.from({ length: 10 }, () =>
            fetch('/api/state', { headers: { 'x-sluice-token': token } }).then((r) => r.json() as Promise<{ at: number }>),
          ),
        );
        return all.map((state) => state.at);
      }, token);
      await page.close();
      expect(new Set(answers).size).toBe(1);
      // One pass over the ended index and one DLQ depth for the page's first read and the ten (before the snapshot was
      // shared: eleven of each); no Scan.
      expect(opened.stateReads()).toEqual(['GetQueueAttributesCommand']);
      expect(opened.endedReads()).toBe(ENDED_QUERIES_A_PASS);
    } finally {
      await opened.close();
    }
  }, 120_000);

  test("the DLQ view lists the table's dead-lettered jobs and the DLQ's depth without receiving a message", async () => {
    const sqs = ownSqs();
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: resident.vars.SLUICE_QUEUE_URL,
        MessageBody: JSON.stringify({ kind: 'glue', id: 'lost-1', pool: 'nowhere', jobName: 'nightly' }),
      }),
    );
    const doc = ownDoc();
    await waitFor(
      'lost-1 dead-lettered',
      async () =>
        (await doc.send(new GetCommand({ TableName: resident.vars.SLUICE_TABLE, Key: { pk: 'JOB#lost-1', sk: 'JOB' } }))).Item
          ?.deadLetteredAt,
      60_000,
      100,
    );
    const REASON =
      "unknown pool 'nowhere': create it with `sluice pool set-limit nowhere N --create` (or configure it in the stage's pools), then redrive the job";
    const opened = await openDashboard({ refreshMs: 600_000, jobsRefreshMs: 600_000 });
    try {
      // The page shows the job, what it runs, its reason and the queue's depth.
      const page = await context.newPage();
      await page.goto(opened.dashboard.url);
      await page.locator('#dlq tr[data-job="lost-1"]').waitFor({ timeout: 60_000 });
      expect(await page.locator('#dlq tr[data-job="lost-1"] .name').textContent()).toBe('nightly');
      expect(await page.locator('#dlq tr[data-job="lost-1"] .reason').textContent()).toBe(REASON);
      expect(await page.locator('#dlq-count').textContent()).toMatch(/^\(1 message in the queue;/);
      await page.close();
      const token = await tokenOf(opened.dashboard.url);
      const state = (await (await fetch(`${opened.dashboard.url}api/state`, { headers: { 'x-sluice-token': token } })).json()) as {
        deadLettered: Array<{ jobId: string; pool: string; lastError: string; deadLetteredAt: number }>;
        deadLetterQueue: { visible: number; inFlight: number };
      };
      expect(state.deadLettered).toEqual([
        expect.objectContaining({
          jobId: 'lost-1',
          pool: 'nowhere',
          lastError: REASON,
          target: 'nightly',
        }),
      ]);
      expect(state.deadLetterQueue).toEqual({ visible: 1, inFlight: 0 });
      // One read for the page and this request, and no receive: the message stays visible to a redrive.
      expect(opened.stateReads()).toEqual(['GetQueueAttributesCommand']);
      expect(opened.endedReads()).toBe(ENDED_QUERIES_A_PASS);
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: resident.vars.SLUICE_DLQ_URL,
          AttributeNames: ['ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      expect(Attributes?.ApproximateNumberOfMessagesNotVisible).toBe('0');
    } finally {
      await opened.close();
      sqs.destroy();
    }
  }, 120_000);
});

describe('the local emulators and a page of another origin', () => {
  test('DynamoDB: a signed PutItem and a Scan with CORS, a no-cors POST; SQS: a no-cors form POST: all refused, nothing written or read', async () => {
    const page = await attackerPage();
    const dynamodb = resident.vars.AWS_ENDPOINT_URL_DYNAMODB!;
    const table = resident.vars.SLUICE_TABLE!;
    // Any signature passes locally: these headers are all a page needs to look like the SDK.
    const signed = (target: string) => ({
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `DynamoDB_20120810.${target}`,
      'x-amz-date': '20260101T000000Z',
      authorization: 'AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00',
    });
    const outcomes = await attempt(page, [
      {
        label: 'PutItem',
        url: dynamodb,
        init: {
          method: 'POST',
          headers: signed('PutItem'),
          body: JSON.stringify({ TableName: table, Item: { pk: { S: 'WEB' }, sk: { S: 'PAGE' } } }),
        },
      },
      { label: 'Scan', url: dynamodb, init: { method: 'POST', headers: signed('Scan'), body: JSON.stringify({ TableName: table }) } },
      { label: 'no-cors POST', url: dynamodb, init: { method: 'POST', mode: 'no-cors', body: JSON.stringify({ TableName: table }) } },
      {
        label: 'SQS no-cors form POST',
        url: resident.vars.AWS_ENDPOINT_URL_SQS!,
        init: {
          method: 'POST',
          mode: 'no-cors',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'Action=CreateTopic&Name=from-a-page',
        },
      },
    ]);
    await page.close();
    const written = await ownDoc().send(new GetCommand({ TableName: table, Key: { pk: 'WEB', sk: 'PAGE' }, ConsistentRead: true }));
    expect(written.Item).toBeUndefined();
    expect(outcomes).toEqual([
      { label: 'PutItem', ...BLOCKED },
      { label: 'Scan', ...BLOCKED },
      { label: 'no-cors POST', ...OPAQUE },
      { label: 'SQS no-cors form POST', ...OPAQUE },
    ]);
    // The stack's terminal says what it refused and from where.
    for (const line of [
      `refused a web page's request to the local DynamoDB emulator: OPTIONS / from ${attackerOrigin}`,
      `refused a web page's request to the local DynamoDB emulator: POST / from ${attackerOrigin}`,
      `refused a web page's request to the local SQS emulator: POST / from ${attackerOrigin}`,
    ])
      await waitFor(line, () => resident.stderr().includes(line), 20_000);
  }, 120_000);
});
