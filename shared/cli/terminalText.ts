/**
 * What the CLI prints comes partly from data others wrote (job specs, callback reasons, dead-letter bodies and
 * attributes, SDK error messages): a terminal would act on the control characters in it (retitle the window, clear the
 * screen, move the cursor, rewrite the clipboard with OSC 52). These make such text inert.
 */

/** ESC (or C1) sequences, whole: OSC/DCS/SOS/PM/APC strings up to their terminator, CSI with its parameters, two-byte escapes. */
const SEQUENCES = new RegExp(
  [
    // OSC, DCS, SOS, PM, APC: ESC ] / ESC P / ESC X / ESC ^ / ESC _ (or their C1 forms) ... BEL or ST (ESC \ or C1 ST)
    '(?:\\u001b[\\]PX^_]|[\\u009d\\u0090\\u0098\\u009e\\u009f])[^\\u0007\\u001b\\u009c]*(?:\\u0007|\\u001b\\\\|\\u009c)?',
    // CSI: ESC [ (or C1 CSI) parameters, intermediates, final byte
    '(?:\\u001b\\[|\\u009b)[0-?]*[ -/]*[@-~]?',
    // any other escape: ESC, its intermediates and final byte
    '\\u001b[ -/]*[0-~]?',
  ].join('|'),
  'g',
);

/** C0 controls but tab and newline, DEL, C1 controls. */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** `text` without escape sequences or control characters (tab and newline kept): safe to print to a terminal. */
export function terminalSafe(text: string): string {
  return text.replace(SEQUENCES, '').replace(CONTROLS, '');
}

/**
 * JSON for a terminal: JSON.stringify already escapes C0 controls in strings; DEL and C1 controls (and the line
 * separators U+2028/9) it leaves raw, so they are escaped too. The data is the same for any JSON reader.
 */
export function terminalJson(value: unknown, indent?: number): string {
  return (JSON.stringify(value, null, indent) ?? 'null').replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
