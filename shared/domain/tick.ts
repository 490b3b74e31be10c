/**
 * A tick: the delayed message that lets in the jobs waiting for a limit's start rate once its next start can be booked
 * (shared/domain/rate.ts). It travels on the job queue; its body names the limit and nothing else.
 */
export function tickBody(gate: string): string {
  return JSON.stringify({ sluiceTick: gate });
}

/** The limit a tick names, or undefined if the body is not a tick (a job). */
export function tickOf(body: string): string | undefined {
  if (!body.startsWith('{"sluiceTick":')) return undefined;
  try {
    const parsed = JSON.parse(body) as { sluiceTick?: unknown };
    return typeof parsed.sluiceTick === 'string' && Object.keys(parsed).length === 1 ? parsed.sluiceTick : undefined;
  } catch {
    return undefined;
  }
}
