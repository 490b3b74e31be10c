import type { JobStarter, JobStarters, RunStatus, StartOptions, StatusOptions, StopResult } from '../ports/jobStarter';
import type { StarterOptions } from './kindDefinition';
import { type JobKind, KINDS, type JobSpec } from './registry';

/** One starter per registered kind, each loading its SDK adapter on first use. */
export function kindStarters(options: StarterOptions): JobStarters {
  return Object.fromEntries(KINDS.map((k) => [k.kind, new LazyStarter(k.kind, () => k.starter(options))])) as unknown as JobStarters;
}

/** A kind's starter, loaded on its first call (a function that never meets a kind never loads its SDK client). */
export class LazyStarter implements JobStarter {
  private loaded: Promise<JobStarter> | undefined;

  constructor(
    readonly kind: JobKind,
    private readonly load: () => Promise<JobStarter>,
  ) {}

  private real(): Promise<JobStarter> {
    this.loaded ??= this.load().catch((error: unknown) => {
      this.loaded = undefined; // a failed load is tried again next call
      throw error;
    });
    return this.loaded;
  }

  async start(job: JobSpec, options?: StartOptions): Promise<{ executionId: string }> {
    return (await this.real()).start(job, options);
  }

  async status(job: JobSpec, executionId: string, options?: StatusOptions): Promise<RunStatus> {
    return (await this.real()).status(job, executionId, options);
  }

  async stop(job: JobSpec, executionId: string): Promise<StopResult | void> {
    return (await this.real()).stop(job, executionId);
  }

  /** The real starter's run id before a start (JobStarter.runIdOf), or undefined for a kind that cannot know it. */
  async runIdOf(job: JobSpec, options?: StartOptions): Promise<string | undefined> {
    const real = await this.real();
    return real.runIdOf ? real.runIdOf(job, options) : undefined;
  }
}
