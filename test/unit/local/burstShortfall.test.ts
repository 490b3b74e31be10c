import { shortfall } from '../../../bench/scenarios/burst';
import type { SimRun } from '../../../local/simulators/model';

let seq = 0;
const run = (startedAt: number, endedAt?: number): SimRun =>
  ({ startedAt, endedAt, startSeq: ++seq, endSeq: endedAt === undefined ? undefined : ++seq }) as unknown as SimRun;

describe('burst shortfall: slot-time below the limit in a window, time-weighted', () => {
  test('a pool at its limit all along loses nothing', () => {
    // two slots: a then b in the first, c in the second, each hand-off instant
    expect(shortfall([run(0, 50), run(50, 100), run(0, 100)], 2, 0, 100)).toEqual({ shortfallMs: 0, minInProgress: 2 });
  });

  test('a slot idle for 10 ms between two runs costs 10 slot-ms; the fewest in progress is counted', () => {
    expect(shortfall([run(0, 40), run(50, 100), run(0, 100)], 2, 0, 100)).toEqual({ shortfallMs: 10, minInProgress: 1 });
  });

  test('only the window counts: idle time before `from` and after `to` is not lost', () => {
    // one slot idle in [0, 20) and [80, 100); window [20, 80]
    expect(shortfall([run(20, 80)], 1, 20, 80)).toEqual({ shortfallMs: 0, minInProgress: 1 });
    expect(shortfall([run(20, 80)], 1, 10, 90)).toEqual({ shortfallMs: 20, minInProgress: 0 });
  });

  test('a dip of three slots for 1 s at limit 20 is 3 slot-seconds', () => {
    const runs = [
      ...Array.from({ length: 17 }, () => run(0, 3000)),
      ...Array.from({ length: 3 }, () => run(0, 1000)),
      ...Array.from({ length: 3 }, () => run(2000, 3000)),
    ];
    expect(shortfall(runs, 20, 0, 3000)).toEqual({ shortfallMs: 3000, minInProgress: 17 });
  });
});
