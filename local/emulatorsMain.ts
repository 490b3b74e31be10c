import { startEmulators } from './emulators';

/** Runs the emulators as a child process (tests use it: jest cannot load ESM-only fauxqs). Prints one JSON line. */
void (async () => {
  const emulators = await startEmulators();
  process.stdout.write(`${JSON.stringify({ sqsEndpoint: emulators.sqsEndpoint, dynamodbEndpoint: emulators.dynamodbEndpoint })}\n`);
  const stop = () => void emulators.close().finally(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdin.on('end', stop); // parent gone
  process.stdin.resume();
})();
