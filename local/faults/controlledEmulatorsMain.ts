import readline from 'node:readline';
import { type EmulatorName, type EmulatorRestart, startEmulators } from '../emulators';

/**
 * The emulators as a child process that takes fault commands (tests use it: jest cannot load ESM-only fauxqs).
 * Prints one JSON line with the endpoints, then reads commands from stdin, one JSON object a line, and answers each
 * with one JSON line:
 *   {"id": 1, "restart": "dynamodb", "downMs": 800, "dropConnections": false}  ->  {"id": 1, "ok": true, "tookMs": 812}
 * End of stdin (the parent is gone), SIGTERM or SIGINT stops it.
 */
interface Command extends EmulatorRestart {
  id: number;
  restart: EmulatorName;
}

void (async () => {
  const emulators = await startEmulators();
  const answer = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
  answer({ sqsEndpoint: emulators.sqsEndpoint, dynamodbEndpoint: emulators.dynamodbEndpoint });
  const stop = () => void emulators.close().finally(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  const commands = readline.createInterface({ input: process.stdin });
  commands.on('line', (line) => {
    let command: Command;
    try {
      command = JSON.parse(line) as Command;
    } catch {
      answer({ ok: false, error: `not a command: ${line}` });
      return;
    }
    const started = Date.now();
    emulators
      .restart(command.restart, command)
      .then(() => answer({ id: command.id, ok: true, tookMs: Date.now() - started }))
      .catch((error: unknown) => answer({ id: command.id, ok: false, error: String(error) }));
  });
  commands.on('close', stop); // parent gone
})();
