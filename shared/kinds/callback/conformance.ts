import { envelope, type KindConformance } from '../kindConformance';
import { CALLBACK_REPORT, MAX_REASON_LENGTH } from './reports';
import { ALLOWED_TARGET_ENV } from './targets';
import { TOKEN_SECRET_ENV } from './secret';

const TOKEN = 'cb2.Q2FsbGJhY2tUb2tlbk1hY09mVGhlSm9iT3JkZXJTZXZlbg.1795857008462.1795868408.order-7';
const completed = (detail: Record<string, unknown>) => envelope(CALLBACK_REPORT.source, CALLBACK_REPORT.completed, detail);

export const conformance: KindConformance = {
  // The simulator plays the user's system behind a function named `name` (an asynchronous invoke); it sends a heartbeat
  // every quarter of heartbeatSeconds, so a run whose report is lost ends (failed) within seconds, not at its timeout.
  spec: (id, name) => ({
    kind: 'callback',
    id,
    target: { lambda: name },
    payload: { day: '2026-11-22' },
    timeoutSeconds: 3600,
    heartbeatSeconds: 5,
  }),
  // No status API: a run is in progress until its report, or its deadline, ends it.
  statuses: {},
  documentedStatuses: [],
  statusApi: false,
  env: { [ALLOWED_TARGET_ENV.lambda]: '*', [TOKEN_SECRET_ENV]: 'conformance-secret' },
  ignoredEvents: [['a heartbeat', envelope(CALLBACK_REPORT.source, CALLBACK_REPORT.heartbeat, { token: TOKEN })]],
  malformedEvents: [
    ['no token', completed({ outcome: 'succeeded' })],
    ['an empty token', completed({ token: '', outcome: 'succeeded' })],
    ['an outcome that is none', completed({ token: TOKEN, outcome: 'done' })],
    ['a reason too long to keep', completed({ token: TOKEN, outcome: 'failed', reason: 'x'.repeat(MAX_REASON_LENGTH + 1) })],
    ['a heartbeat without its token', envelope(CALLBACK_REPORT.source, CALLBACK_REPORT.heartbeat, {})],
  ],
};
