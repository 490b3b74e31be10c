import { randomBytes } from 'node:crypto';
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
import { takeSnapshot } from '../inspect/snapshot';
import { InUseHistory } from './history';
import { dashboardPage } from './page';

export interface DashboardTargets {
  doc: DynamoDBDocumentClient;
  sqs: SQSClient;
  table: string;
  queueUrl: string;
  dlqUrl: string;
}

export interface Dashboard {
  url: string;
  close(): Promise<void>;
}

/** How often the dashboard samples slots in use for its chart, whether or not a page is open. */
const SAMPLE_MS = 5_000;

/**
 * `sluice dashboard`: a page and a small JSON API on 127.0.0.1 only, reading the table and queues with the caller's own
 * credentials (nothing is deployed). Changes (a limit, a redrive) are POSTs that need the page's token in a header:
 * another site open in the browser can neither send that header without a preflight (which is never answered) nor read
 * the token; the Host header must be this server's, so a rebound DNS name gets nothing.
 */
export async function startDashboard(targets: DashboardTargets, port: number): Promise<Dashboard> {
  const token = randomBytes(16).toString('hex');
  const history = new InUseHistory();
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
  const sample = async () => {
    const inUse: Record<string, number> = {};
    for (const name of await leases.listPools()) inUse[name] = (await leases.getPool(name))?.inUse ?? 0;
    history.add(Date.now(), inUse);
  };
  let address = '';

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.headers.host !== address && req.headers.host !== address.replace('127.0.0.1', 'localhost'))
      return send(res, 421, { error: `this dashboard answers only to ${address}` });
    const url = new URL(req.url ?? '/', `http://${address}`);
    if (req.method === 'GET' && url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'x-frame-options': 'DENY' });
      res.end(dashboardPage({ token, table: targets.table, queueUrl: targets.queueUrl }));
      return;
    }
    if (req.method === 'GET' && url.pathname === '/api/state') {
      const snapshot = await takeSnapshot(targets, { recent: 30, waiters: 10 });
      history.add(snapshot.at, Object.fromEntries(snapshot.pools.map((p) => [p.name, p.inUse])));
      return send(res, 200, { ...snapshot, history: history.series(), table: targets.table });
    }
    if (req.method === 'POST') {
      if (req.headers['x-sluice-token'] !== token) return send(res, 403, { error: 'missing or wrong x-sluice-token' });
      const body = (await readJson(req)) as Record<string, unknown>;
      const limitPath = /^\/api\/pools\/([^/]+)\/limit$/.exec(url.pathname);
      if (limitPath) {
        const pool = decodeURIComponent(limitPath[1]!);
        const limit = body.limit;
        if (typeof limit !== 'number' || !isValidLimit(limit))
          return send(res, 400, { error: `the limit must be a whole number from 0 to ${MAX_POOL_LIMIT}` });
        if (!(await leases.getPool(pool))) return send(res, 404, { error: `no pool '${pool}'` });
        const result = await admin.setLimit(pool, limit);
        await sample();
        return send(res, 200, { pool, limit, ...result });
      }
      if (url.pathname === '/api/dlq/redrive') {
        const id = body.id;
        if (typeof id !== 'string' || id === '') return send(res, 400, { error: 'give the job id to redrive' });
        const results = await redriveDeadLetters({ ...targets, ledger }, [id]);
        if (results.length === 0) return send(res, 404, { error: `job ${id} is not in the dead-letter queue` });
        return send(res, 200, { results });
      }
    }
    send(res, 404, { error: `no ${req.method} ${url.pathname}` });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const e = error as { name?: string; message?: string };
      if (!res.headersSent) send(res, 500, { error: `${e.name ?? 'Error'}: ${e.message ?? String(error)}` });
      else res.destroy();
    });
  });
  server.listen(port, '127.0.0.1');
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]) => Promise.reject(error as Error))]);
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  await sample().catch(() => undefined);
  const sampler = setInterval(() => void sample().catch(() => undefined), SAMPLE_MS);
  return {
    url: `http://${address}/`,
    async close() {
      clearInterval(sampler);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Runs the dashboard until Ctrl-C. */
export async function runDashboard(targets: DashboardTargets, io: CliIo, port: number): Promise<number> {
  let dashboard: Dashboard;
  try {
    dashboard = await startDashboard(targets, port);
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

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
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
