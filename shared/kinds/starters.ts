import type { JobStarter, JobStarters, RunStatus, StartOptions, StatusOptions, StopResult } from '../ports/jobStarter';
import type { StarterOptions } from './kindDefinition';
import { type JobKind, KINDS, type JobSpec } from './registry';

/** Makes a kind's starter, loading its SDK adapter. */
export type StarterLoader = (options: StarterOptions) => Promise<JobStarter>;
/** One loader per registered kind (a kind missing here does not compile). */
export type StarterLoaders = { readonly [K in JobKind]: StarterLoader };

let loaders: StarterLoaders | undefined;

/**
 * Given by shared/kinds/starterLoaders.ts when a process loads it: the kinds' SDK adapters are in a function's bundle
 * only if the function imports that module, which the ones that start, check or stop runs do (jobSets does not).
 */
export function provideStarterLoaders(given: StarterLoaders): void {
  loaders = given;
}

/** One starter per registered kind, each loading its SDK adapter on first use. */
export function kindStarters(options: StarterOptions): JobStarters {
  const load = (kind: JobKind) => {
    if (!loaders)
      throw new Error(`no job starters in this process (kind ${kind}): its entry point must import shared/kinds/starterLoaders`);
    return loaders[kind](options);
  };
  return Object.fromEntries(KINDS.map((k) => [k.kind, new LazyStarter(k.kind, () => load(k.kind))])) as unknown as JobStarters;
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
