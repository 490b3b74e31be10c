import { SluiceError, StartUsageError } from '../shared/errors';
import { runSample } from './sampleRun';
import { parseStartArgs, START_USAGE } from './startArgs';

/**
 * `npm start`: a sample workload through the whole local stack (sampleRun.ts), or with --serve the resident stack for
 * your own jobs (serve.ts). A wrong flag is one line and a usage hint (exit 2); an error Sluice names is one line
 * (exit 1); anything else prints its stack.
 */
async function main(argv: readonly string[]): Promise<number> {
  const options = parseStartArgs(argv);
  if (options.help) {
    console.log(START_USAGE);
    return 0;
  }
  if (options.sets) {
    const { runJobSetsDay } = await import('./jobSetsDay');
    return runJobSetsDay(options);
  }
  if (options.serve) {
    const { serve } = await import('./serve');
    return serve(options);
  }
  return runSample(options);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof StartUsageError) {
      console.error(`npm start: ${error.message}\nRun 'npm start -- --help' for the flags.`);
      process.exit(2);
    }
    console.error(
      error instanceof SluiceError ? `npm start: ${error.message}` : error instanceof Error ? (error.stack ?? error.message) : error,
    );
    process.exit(1);
  },
);
