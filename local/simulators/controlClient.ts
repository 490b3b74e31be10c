import type { JsonRunBehaviour } from './controlRoutes';
import type { FaultPatch, FaultState } from './faults';
import type { ConcurrencyPoint } from './model';
import { concurrencyTimeline, maxConcurrency, type RunRecords } from './runBook';

/** Drives a simulator that runs in another process (e.g. the integration stack's child process) over its control API. */
export interface JobApiSimulatorControl {
  endpoint: string;
  setFaults(patch: FaultPatch): Promise<FaultState>;
  faults(): Promise<FaultState>;
  configure(patch: JsonRunBehaviour): Promise<void>;
  /** As JobApiSimulator.deleteFlow / deleteJob. */
  deleteFlow(flowName: string): Promise<void>;
  deleteJob(jobName: string): Promise<void>;
  reset(): Promise<void>;
  records(): Promise<RunRecords>;
  inProgress(): Promise<number>;
  maxObservedConcurrency(group?: string): Promise<number>;
  concurrencyTimeline(group?: string): Promise<ConcurrencyPoint[]>;
}

export function jobApiSimulatorControl(endpoint: string): JobApiSimulatorControl {
  const call = async <T>(method: 'GET' | 'POST', route: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${endpoint}/__sim/${route}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`simulator control ${method} ${route}: HTTP ${res.status} ${text}`);
    return JSON.parse(text) as T;
  };
  const records = () => call<RunRecords>('GET', 'records');
  return {
    endpoint,
    setFaults: (patch) => call('POST', 'faults', patch),
    faults: () => call('GET', 'faults'),
    configure: async (patch) => void (await call('POST', 'configure', patch)),
    deleteFlow: async (flowName) => void (await call('POST', 'delete-flow', { flowName })),
    deleteJob: async (jobName) => void (await call('POST', 'delete-job', { jobName })),
    reset: async () => void (await call('POST', 'reset', {})),
    records,
    inProgress: async () => (await records()).runs.filter((r) => r.endedAt === undefined).length,
    maxObservedConcurrency: async (group) => maxConcurrency((await records()).runs, group),
    concurrencyTimeline: async (group) => concurrencyTimeline((await records()).runs, group),
  };
}
