import { randomBytes, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobLedger } from '../adapters/dynamodb/jobLedger';
import { DynamoLeaseStore } from '../adapters/dynamodb/leaseStore';
import { SqsJobQueue } from '../adapters/sqs/jobQueue';
import { noMetrics, silentLog } from '../app/deps';
import { PoolAdmin } from '../app/poolAdmin';
import { isValidLimit, MAX_POOL_LIMIT } from '../domain/pool';
import { systemClock } from '../ports/clock';
import type { CliIo } from '../cli/main';
import { redriveDeadLetters } from '../inspect/redrive';
import { type JobsView, queueDepth, type QueueDepth, readJobsView, readPools } from '../inspect/viewSnapshot';
import type { PoolDetail } from '../inspect/pools';
import { type HistoryWindow, type RunHistory, runHistories } from '../inspect/runHistory';
import { readSetRuns, type SetRunView } from '../inspect/setRuns';
import { DEFAULT_JOB_SETS_FILE } from '../cli/sets';
import { dashboardPage } from './page';
import { ReadAtMostEvery } from './readAtMostEvery';

export interface DashboardTargets {
  doc: DynamoDBDocumentClient;
  sqs: SQSClient;
  table: string;
  queueUrl: string;
  dlqUrl: string;
  /** the job sets file whose sets' runs are shown (besides every set with an open run) */
  jobSetsFile?: string;
}

export interface Dashboard {
  url: string;
  close(): Promise<void>;
}

/** What `GET /api/state` answers: one snapshot, shared by every request while it is young. */
export interface DashboardState {
  at: number;
  table: string;
  pools: PoolDetail[];
  /** the AWS region of the runs (their console links), from the SDK's configuration */
  region?: string;
  /** when the job records below were read (they are read less often: Queries of the ended index, see readJobsView) */
  jobsAt: number;
  /** the latest changed jobs, and the latest of each state (the page filters them by state) */
  recentJobs: JobsView['recent'];
  /** the jobs the table records as dead-lettered: what the DLQ view lists (no DLQ message is received for it) */
  deadLettered: JobsView['deadLettered'];
  deadLetterQueue: QueueDepth;
  /** the last 24 hours per pool, and the last 6 hours and hour closer, from the job records (read with them) */
  history: Record<HistoryWindow, RunHistory>;
  /** a Query of the ended index stopped at its page limit: the lists and history are of the part it read */
  jobsTruncated: boolean;
  /** the latest runs of each job set, with their counts; when they were read */
  setRuns: SetRunView[];
  setRunsAt: number;
}

/** One request the dashboard answered, for its terminal (the refused ones) and tests. */
export interface AnsweredRequest {
  method: string;
  path: string;
  status: number;
  host?: string;
  origin?: string;
  /** why it was refused: another host name (DNS rebinding), another origin, no or a wrong token */
  refused?: Refusal;
}

export const Refusal = { Host: 'host', Origin: 'origin', Token: 'token' } as const;
export type Refusal = (typeof Refusal)[keyof typeof Refusal];

export interface DashboardOptions {
  /** the pools, holders, waiters and the DLQ's depth are read at most this often, however many ask (default 3 s) */
  refreshMs?: number;
  /** the job records (about 270 small Queries of the ended index: see readJobsView) at most this often (default 30 s) */
  jobsRefreshMs?: number;
  /** the job sets' runs at most this often (default 60 s) */
  setRunsRefreshMs?: number;
  onRequest?: (request: AnsweredRequest) => void;
}

/** The page asks every 3 s; a second page, or a reload, is served the same snapshot. */
export const REFRESH_MS = 3_000;
/** The recent and dead-lettered jobs and the day's history come from the indexes: a pass reads every ended job of the day, so not more than twice a minute. */
export const JOBS_EVERY_MS = 30_000;
/** A set run's counts come from its item, and an open run's from its jobs' records (a GetItem each): once a minute. */
export const SET_RUNS_EVERY_MS = 60_000;
const RUNS_PER_SET = 5;
const RECENT_JOBS = 30;
const DEAD_LETTERED_JOBS = 100;
const TOKEN_HEADER = 'x-sluice-token';

/**
 * `sluice dashboard`: a page and a small JSON API on 127.0.0.1 only, reading the table and queues with the caller's own
 * credentials (nothing is deployed). Every request passes three checks before anything is read:
 * - its Host header names this server (127.0.0.1:port or localhost:port): a DNS name rebound to 127.0.0.1 gets 421
 *   and nothing else, so a page on that name cannot read the page and its token;
 * - it has no Origin header, or this server's: another origin's CORS request, preflight or no-cors POST gets 403 with
 *   no CORS header (a browser sends Origin on each of them: https://fetch.spec.whatwg.org/#origin-header);
 * - under /api/, it carries the page's token in the x-sluice-token header. A no-cors GET, which has no Origin, cannot
 *   carry it: a no-cors request drops every header that is not CORS-safelisted
 *   (https://fetch.spec.whatwg.org/#concept-headers-guard, "request-no-cors"), and a request that sets it is a CORS
 *   request whose preflight gets 403 (https://developer.mozilla.org/en-US/docs/Glossary/Preflight_request).
 * The state is read at most once per `refreshMs` (the job records, with the history derived from them, once per
 * `jobsRefreshMs`; the job sets' runs once per `setRunsRefreshMs`) however many pages ask.
 */
export async function startDashboard(targets: DashboardTargets, port: number, options: DashboardOptions = {}): Promise<Dashboard> {
  const token = randomBytes(16).toString('hex');
  const region = await targets.sqs.config.region().catch(() => undefined);
  const leases = new DynamoLeaseStore(targets.doc, targets.table);
  const ledger = new DynamoJobLedger(targets.doc, targets.table);
  const admin = new PoolAdmin({
    leases,
    ledger,
    queue: new SqsJobQueue(targets.sqs, targets.queueUrl, targets.dlqUrl),
    clock: systemClock,
    log: silentLog,
    metrics: noMetrics,
  });
  const now = () => systemClock.now();
  const jobsEveryMs = options.jobsRefreshMs ?? JOBS_EVERY_MS;
  const jobs = new ReadAtMostEvery(
    async () => {
      const at = now();
      const [view, pools] = await Promise.all([
        readJobsView(targets.doc, targets.table, {
          recent: RECENT_JOBS,
          deadLettered: DEAD_LETTERED_JOBS,
          now: at,
          ...(region !== undefined && { region }),
        }),
        leases.listPools(),
      ]);
      return { at, ...view, history: runHistories(view.runTimes, at, pools) };
    },
    jobsEveryMs,
    now,
  );
  const setRuns = new ReadAtMostEvery(
    async () => ({ at: now(), runs: await readSetRuns({ ...targets }, RUNS_PER_SET) }),
    options.setRunsRefreshMs ?? SET_RUNS_EVERY_MS,
    now,
  );
  const state = new ReadAtMostEvery(
    async (): Promise<DashboardState> => {
      const [pools, jobsView, deadLetterQueue, sets] = await Promise.all([
        readPools(targets.doc, targets.table, 10, region),
        jobs.get(),
        queueDepth(targets.sqs, targets.dlqUrl),
        setRuns.get(),
      ]);
      return {
        at: now(),
        table: targets.table,
        pools,
        ...(region !== undefined && { region }),
        jobsAt: jobsView.at,
        recentJobs: jobsView.recent,
        deadLettered: jobsView.deadLettered,
        deadLetterQueue,
        history: jobsView.history,
        jobsTruncated: jobsView.truncated,
        setRuns: sets.runs,
        setRunsAt: sets.at,
      };
    },
    options.refreshMs ?? REFRESH_MS,
    now,
  );
  let address = '';
  const ownHosts = () => [address, address.replace('127.0.0.1', 'localhost')];

  const handle = async (req: IncomingMessage, res: ServerResponse, answer: AnsweredRequest): Promise<void> => {
    if (!ownHosts().includes(req.headers.host ?? '')) {
      answer.refused = Refusal.Host;
      return send(res, 421, { error: `this dashboard answers only to ${address}` });
    }
    if (req.headers.origin !== undefined && !ownHosts().some((host) => req.headers.origin === `http://${host}`)) {
      answer.refused = Refusal.Origin;
      return send(res, 403, { error: 'this dashboard answers only its own page' });
    }
    const url = new URL(req.url ?? '/', `http://${address}`);
    if (req.method === 'GET' && url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'x-frame-options': 'DENY', ...COMMON_HEADERS });
      res.end(dashboardPage({ token, table: targets.table, queueUrl: targets.queueUrl, jobsEveryMs }));
      return;
    }
    if (url.pathname.startsWith('/api/') && !sameToken(req.headers[TOKEN_HEADER], token)) {
      answer.refused = Refusal.Token;
      return send(res, 403, { error: `missing or wrong ${TOKEN_HEADER}` });
    }
    if (req.method === 'GET' && url.pathname === '/api/state') return send(res, 200, await state.get());
    if (req.method === 'POST') {
      const body = (await readJson(req)) as Record<string, unknown>;
      const limitPath = /^\/api\/pools\/([^/]+)\/limit$/.exec(url.pathname);
      if (limitPath) {
        const pool = decodeURIComponent(limitPath[1]!);
        const limit = body.limit;
        if (typeof limit !== 'number' || !isValidLimit(limit))
          return send(res, 400, { error: `the limit must be a whole number from 0 to ${MAX_POOL_LIMIT}` });
        if (!(await leases.getPool(pool))) return send(res, 404, { error: `no pool '${pool}'` });
        const result = await admin.setLimit(pool, limit);
        state.invalidate();
        return send(res, 200, { pool, limit, ...result });
      }
      if (url.pathname === '/api/dlq/redrive') {
        const id = body.id;
        if (typeof id !== 'string' || id === '') return send(res, 400, { error: 'give the job id to redrive' });
        const results = await redriveDeadLetters({ ...targets, ledger }, [id]);
        jobs.invalidate();
        state.invalidate();
        if (results.length === 0) return send(res, 404, { error: `job ${id} is not in the dead-letter queue` });
        return send(res, 200, { results });
      }
    }
    send(res, 404, { error: `no ${req.method} ${url.pathname}` });
  };

  const server = createServer((req, res) => {
    const answer: AnsweredRequest = {
      method: req.method ?? '',
      path: (req.url ?? '/').split('?')[0]!,
      status: 0,
      ...(req.headers.host !== undefined && { host: req.headers.host }),
      ...(req.headers.origin !== undefined && { origin: req.headers.origin }),
    };
    res.once('finish', () => options.onRequest?.({ ...answer, status: res.statusCode }));
    handle(req, res, answer).catch((error: unknown) => {
      const e = error as { name?: string; message?: string };
      if (!res.headersSent) send(res, 500, { error: `${e.name ?? 'Error'}: ${e.message ?? String(error)}` });
      else res.destroy();
    });
  });
  server.listen(port, '127.0.0.1');
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]) => Promise.reject(error as Error))]);
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `http://${address}/`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Compares in constant time, so the answer's timing says nothing of how much of a guess was right. */
function sameToken(given: string | string[] | undefined, token: string): boolean {
  if (typeof given !== 'string' || given.length !== token.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(token));
}

/**
 * On every answer: never cached, never embedded by another origin (CORP: a no-cors <script> or <img> of it gets
 * nothing, https://developer.mozilla.org/en-US/docs/Web/HTTP/Reference/Headers/Cross-Origin-Resource-Policy), never
 * sniffed as another type. No Access-Control-* header is ever sent.
 */
const COMMON_HEADERS = {
  'cache-control': 'no-store',
  'cross-origin-resource-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
} as const;

/** Runs the dashboard until Ctrl-C. */
export async function runDashboard(targets: DashboardTargets, io: CliIo, port: number): Promise<number> {
  let dashboard: Dashboard;
  try {
    dashboard = await startDashboard({ jobSetsFile: io.env.SLUICE_JOB_SETS_FILE || DEFAULT_JOB_SETS_FILE, ...targets }, port, {
      onRequest: refusalReporter(io),
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      io.stderr(`sluice: port ${port} on 127.0.0.1 is in use (another dashboard?): choose another with --port N`);
      return 1;
    }
    throw error;
  }
  io.stdout(`Sluice dashboard for ${targets.table}: ${dashboard.url}  (127.0.0.1 only; Ctrl-C stops it)`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await dashboard.close();
  return 0;
}

/** A line on stderr per refused request, once per reason and origin or host, so a page that retries cannot flood it. */
function refusalReporter(io: CliIo): (request: AnsweredRequest) => void {
  const seen = new Set<string>();
  return (request) => {
    if (!request.refused) return;
    const why = {
      [Refusal.Host]: `it was sent to Host ${request.host ?? '(none)'} (a DNS name rebound to 127.0.0.1?)`,
      [Refusal.Origin]: `it came from ${request.origin} (a web page open in your browser)`,
      [Refusal.Token]: "it had no or a wrong token (only this dashboard's own page has it)",
    }[request.refused];
    if (seen.has(why) || seen.size >= 100) return;
    seen.add(why);
    io.stderr(`sluice: refused ${request.method} ${request.path}: ${why}`);
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', ...COMMON_HEADERS });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    return {};
  }
}
