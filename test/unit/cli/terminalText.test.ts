import fc from 'fast-check';
import { terminalJson, terminalSafe } from '../../../shared/cli/terminalText';

describe('terminalSafe: text from data printed inert', () => {
  test.each([
    ['a window title (OSC ... BEL)', 'run failed\u001b]0;pwned\u0007 at step 3', 'run failed at step 3'],
    ['a clipboard write (OSC 52 ... ST)', 'x\u001b]52;c;cm0gLXJmIH4=\u001b\\y', 'xy'],
    ['a screen clear and cursor moves (CSI)', '\u001b[2J\u001b[H\u001b[1;31mred\u001b[0m', 'red'],
    ['C1 CSI and OSC', 'a\u009b2Jb\u009d0;t\u009cc', 'abc'],
    ['a carriage return that would overwrite the line, a bell, a backspace, DEL', 'ok\rFAKE\u0007\u0008\u007f', 'okFAKE'],
    ['a lone ESC and a two-byte escape (reset)', 'a\u001bcb\u001b', 'ab'],
    ['tabs and newlines kept', 'line 1\n\tline 2', 'line 1\n\tline 2'],
    ['unicode kept', 'Zürich → 東京 ✓', 'Zürich → 東京 ✓'],
  ])('%s', (_what, text, shown) => expect(terminalSafe(text)).toBe(shown));

  test('what it returns has no control character but tab and newline, whatever it is given', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(terminalSafe(text)).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      }),
    );
  });
});

describe('terminalJson', () => {
  test('the same data for a JSON reader, with no raw control character for a terminal', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, text) => {
        const printed = terminalJson({ value, text }, 2);
        expect(JSON.parse(printed)).toEqual(JSON.parse(JSON.stringify({ value, text })));
        expect(printed).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
      }),
    );
  });
});
