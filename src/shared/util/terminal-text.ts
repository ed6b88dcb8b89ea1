// Text from outside (LLM replies, code output, answers) shown on a terminal must not drive it:
// escape sequences could recolour or clear the screen, move the cursor over earlier lines, set
// the window title or write the clipboard (OSC 52). Control characters are shown as visible
// symbols instead (ESC as ␛, BEL as ␇; C1 controls as their code); line feeds and tabs stay,
// and a carriage return stays only before a line feed.

// eslint-disable-next-line no-control-regex -- matching control characters is this module's purpose
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|\r(?!\n)/g;

function visible(c: string): string {
  const code = c.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code); // ␀..␟ (Control Pictures)
  if (code === 0x7f) return '\u2421'; // ␡
  return `<${code.toString(16).toUpperCase()}>`; // C1: CSI (0x9B), OSC (0x9D), ...
}

/** `text` with every terminal control character made visible and inert. */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, visible);
}
