import { taskOutcome } from '../../../shared/kinds/ecs/taskOutcome';

/** How a stopped ECS task ended, from its stop code and its containers' exit codes (DescribeTasks and the event alike). */

const stopped = (stopCode: string | undefined, containers: Array<{ name: string; exitCode?: number | null; reason?: string }>) => ({
  lastStatus: 'STOPPED',
  stopCode,
  stoppedReason: stopCode === 'EssentialContainerExited' ? 'Essential container in task exited' : 'Task stopped by user',
  containers,
});

test('a task that has not stopped has no outcome yet', () => {
  for (const lastStatus of ['PROVISIONING', 'PENDING', 'RUNNING', 'DEPROVISIONING']) expect(taskOutcome({ lastStatus })).toBeUndefined();
});

test('stopped because an essential container exited, every container exiting 0: succeeded', () => {
  const task = stopped('EssentialContainerExited', [
    { name: 'app', exitCode: 0 },
    { name: 'log-router', exitCode: 0 },
  ]);
  expect(taskOutcome(task)).toEqual({ outcome: 'succeeded', detail: 'STOPPED: every container exited 0' });
});

test.each([
  [
    'a container that exited non-zero',
    stopped('EssentialContainerExited', [
      { name: 'app', exitCode: 0 },
      { name: 'sidecar', exitCode: 143 },
    ]),
    /sidecar exited 143/,
  ],
  [
    'an OOM-killed container',
    stopped('EssentialContainerExited', [{ name: 'app', exitCode: 137, reason: 'OutOfMemoryError' }]),
    /app exited 137 \(OutOfMemoryError\)/,
  ],
  [
    'a container with no exit code',
    stopped('EssentialContainerExited', [{ name: 'app', reason: 'CannotPullContainerError: not found' }]),
    /app has no exit code \(CannotPullContainerError/,
  ],
  ['a null exit code', stopped(undefined, [{ name: 'app', exitCode: null }]), /app has no exit code/],
  [
    'a user stop, exit codes 0 or not',
    stopped('UserInitiated', [{ name: 'app', exitCode: 0 }]),
    /^STOPPED \(UserInitiated\): Task stopped by user$/,
  ],
  ['a task that failed to start', stopped('TaskFailedToStart', []), /TaskFailedToStart/],
  ['a Spot interruption', stopped('SpotInterruption', [{ name: 'app', exitCode: 0 }]), /SpotInterruption/],
  ['no container reported', stopped('EssentialContainerExited', []), /no container reported/],
])('%s: failed, saying why', (_what, task, detail) => {
  const read = taskOutcome(task);
  expect(read?.outcome).toBe('failed');
  expect(read?.detail).toMatch(detail);
});

test('an event without a stop code is judged by its containers alone', () => {
  expect(taskOutcome(stopped(undefined, [{ name: 'app', exitCode: 0 }]))?.outcome).toBe('succeeded');
});
