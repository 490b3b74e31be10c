import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JobState, TRANSITIONS } from '../../../shared/domain/jobState';
import { COMPLETE_TO, PROTOCOL, type ProtocolRow, UNCHANGED } from '../../../shared/domain/protocol';

const rows = Object.entries(PROTOCOL) as Array<[string, ProtocolRow]>;

/** Every from -> to pair the protocol's rows make. */
function protocolMoves(): Set<string> {
  const moves = new Set<string>();
  for (const [step, row] of rows) {
    if (row.from === 'new') continue;
    for (const from of row.from) {
      // A row leaving the state as it is (adopt) makes from -> from.
      const targets = step === 'complete' ? COMPLETE_TO : [row.to === UNCHANGED ? from : row.to];
      for (const to of targets) moves.add(`${from}->${to}`);
    }
  }
  return moves;
}

describe('the lease protocol table', () => {
  test('TRANSITIONS allows exactly the moves the protocol makes', () => {
    const allowed = new Set<string>();
    for (const from of Object.values(JobState)) for (const to of TRANSITIONS[from]) allowed.add(`${from}->${to}`);
    expect([...allowed].sort()).toEqual([...protocolMoves()].sort());
  });

  test('docs/protocol.md shows the same rows as the code (step, from, to, slot)', () => {
    const doc = readFileSync(join(__dirname, '../../../docs/protocol.md'), 'utf8');
    const table = doc
      .split('\n')
      .filter((line) => /^\|\s*`\w+`\s*\|/.test(line))
      .map((line) => line.split('|').map((cell) => cell.trim()))
      .filter((cells) => cells.length === 9); // the protocol table's 7 columns (not the states table)
    const documented = Object.fromEntries(table.map((cells) => [cells[1]!.replace(/`/g, ''), cells]));
    expect(Object.keys(documented).sort()).toEqual(rows.map(([step]) => step).sort());
    for (const [step, row] of rows) {
      const cells = documented[step]!;
      const from = row.from === 'new' ? 'new' : row.from.join(', ');
      const to = step === 'complete' ? COMPLETE_TO.join(', ') : row.to;
      expect({ step, from: cells[3], to: cells[4], slot: cells[5] }).toEqual({ step, from, to, slot: row.slot });
    }
  });
});

describe("the acquirer's rows in the code", () => {
  const root = join(__dirname, '../../..');
  const doc = readFileSync(join(root, 'docs/protocol.md'), 'utf8');
  /** docs/protocol.md, "The acquirer's rows in the code": row -> file. */
  const files = Object.fromEntries(
    doc
      .split('\n')
      .map((line) => /^\|\s*`(\w+)`\s*\|\s*`(shared\/app\/acquire\/\w+\.ts)`\s*\|$/.exec(line))
      .filter((match) => match !== null)
      .map((match) => [match[1]!, match[2]!]),
  );

  test('every row the acquirer writes has its file, whose header names it', () => {
    const acquirerRows = rows.filter(([, row]) => row.by.split(', ').some((by) => by.startsWith('acquirer'))).map(([step]) => step);
    expect(Object.keys(files).sort()).toEqual(acquirerRows.sort());
    for (const step of acquirerRows) {
      const header = /^\/\*\*[\s\S]*?\*\//.exec(readFileSync(join(root, files[step]!), 'utf8'))?.[0] ?? '';
      expect({ step, named: header.includes(`\`${step}\``) }).toEqual({ step, named: true });
    }
  });
});
