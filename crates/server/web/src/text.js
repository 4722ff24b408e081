// Text the page did not write itself — file names, patch lines, a ticket, a reviewer's notes, a
// tool's output — shown as what it is. Characters a screen would act on or hide (C0 and C1
// controls, DEL, bidirectional controls, invisible characters) are written as `<U+XXXX>`, the
// same set and the same form the terminal front end uses, so a Trojan-Source file name or a
// zero-width character reads the same everywhere.
import { html } from "./ui.js";

const HIDDEN =
  "\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u00ad\\u0600-\\u0605\\u061c\\u06dd\\u070f" +
  "\\u0890\\u0891\\u08e2\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2064\\u2066-\\u206f" +
  "\\ufeff\\ufff9-\\ufffb\\u{110bd}\\u{110cd}\\u{13430}-\\u{1343f}\\u{1bca0}-\\u{1bca3}" +
  "\\u{1d173}-\\u{1d17a}\\u{e0001}\\u{e0020}-\\u{e007f}";
// In text that keeps its lines, a carriage return right before a newline stays (a CRLF ending).
const IN_TEXT = new RegExp(`\\r(?!\\n)|[${HIDDEN}]`, "gu");
// In a one-line field, newline, tab and every carriage return are shown too.
const IN_LINE = new RegExp(`[\\n\\t\\r${HIDDEN}]`, "gu");

function code(char) {
  return `<U+${char.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}>`;
}

/** `text` with every hidden character written as `<U+XXXX>`; `oneLine` also shows newline and tab. */
export function visible(text, oneLine = false) {
  return String(text ?? "").replace(oneLine ? IN_LINE : IN_TEXT, code);
}

/** `text` as elements: plain runs, and each hidden character as a marked `<U+XXXX>`. */
export function Shown({ text, line = false }) {
  const source = String(text ?? "");
  const pattern = line ? IN_LINE : IN_TEXT;
  const parts = [];
  let last = 0;
  for (const match of source.matchAll(pattern)) {
    if (match.index > last) parts.push(source.slice(last, match.index));
    parts.push(html`<span class="hidden-char" title="a character that does not show as itself">${code(match[0])}</span>`);
    last = match.index + match[0].length;
  }
  if (last < source.length) parts.push(source.slice(last));
  return parts;
}
