// The diff viewer: diff2html draws the files (a list with +/− counts, each file foldable, unified
// or side by side) and highlight.js colours the code. The patch is shown through `visible` first,
// so a hidden character in a file name or a line is drawn as `<U+XXXX>`. The reviewer's notes are
// then placed under the lines they name.
import { useEffect, useRef, useState } from "preact/hooks";
import { visible } from "./text.js";
import { html } from "./ui.js";

/** The row of `wrapper`'s new-side line `line`, in the table that shows the new side. */
function rowOf(wrapper, line, sideBySide) {
  const selector = sideBySide ? ".d2h-code-side-linenumber" : ".d2h-code-linenumber .line-num2";
  const tables = wrapper.querySelectorAll(".d2h-diff-tbody");
  const table = sideBySide ? tables[tables.length - 1] : tables[0];
  if (!table) return null;
  for (const cell of table.querySelectorAll(selector)) {
    if (cell.textContent.trim() === String(line)) return cell.closest("tr");
  }
  return null;
}

function noteRow(text, cells) {
  const row = document.createElement("tr");
  row.className = "review-note-row";
  const cell = document.createElement("td");
  cell.colSpan = cells;
  if (text !== null) {
    const note = document.createElement("div");
    note.className = "review-note";
    note.setAttribute("data-test", "review-note");
    note.textContent = visible(text);
    cell.append(note);
  }
  row.append(cell);
  return row;
}

/** Puts each note that names a file and line of the diff under that line; the notes placed. */
function placeNotes(root, notes, sideBySide) {
  const placed = new Set();
  for (const note of notes) {
    if (!note.file || !note.line) continue;
    const wrapper = [...root.querySelectorAll(".d2h-file-wrapper")].find(
      (candidate) => candidate.querySelector(".d2h-file-name")?.textContent.trim() === visible(note.file, true),
    );
    const row = wrapper && rowOf(wrapper, note.line, sideBySide);
    if (!row) continue;
    row.after(noteRow(`reviewer: ${note.note}`, row.children.length));
    if (sideBySide) {
      // Keep the old side's rows level with the new side's.
      const left = wrapper.querySelectorAll(".d2h-diff-tbody")[0];
      const index = [...row.parentNode.children].indexOf(row);
      const partner = left && left.children[index];
      if (partner) partner.after(noteRow(null, partner.children.length));
    }
    placed.add(note);
  }
  return placed;
}

export function DiffView({ diff, notes, onPlaced }) {
  const root = useRef(null);
  const [layout, setLayout] = useState(window.matchMedia("(max-width: 760px)").matches ? "line-by-line" : "side-by-side");

  useEffect(() => {
    if (!root.current || !window.Diff2HtmlUI) return;
    const ui = new window.Diff2HtmlUI(root.current, visible(diff.patch), {
      outputFormat: layout,
      drawFileList: true,
      fileListToggle: false,
      fileListStartVisible: true,
      fileContentToggle: true,
      matching: "lines",
      highlight: true,
      synchronisedScroll: true,
      colorScheme: "auto",
    }, window.hljs);
    ui.draw();
    ui.highlightCode();
    onPlaced(placeNotes(root.current, notes, layout === "side-by-side"));
  }, [diff.patch, layout, notes]);

  return html`<section class="panel" aria-labelledby="diff-heading">
    <div class="bar">
      <h2 id="diff-heading">Diff</h2>
      <div class="tabs" role="tablist" aria-label="Layout">
        <button type="button" role="tab" aria-selected=${layout === "line-by-line"} onClick=${() => setLayout("line-by-line")} data-test="unified">Unified</button>
        <button type="button" role="tab" aria-selected=${layout === "side-by-side"} onClick=${() => setLayout("side-by-side")} data-test="split">Side by side</button>
      </div>
    </div>
    <p class="sha">SHA-256 <code data-test="sha">${diff.sha256}</code></p>
    <div ref=${root} class="diff" data-test="diff"></div>
  </section>`;
}
