// The numbers of a whole tensor, a page at a time (GET .../tensors/{name}/slice): pages of rows
// and columns of its last two axes, the leading axes (sequence, head) picked, a jump to a row, a
// column or a token, and a selection of cells copied as CSV.

import { request } from "../lib/api.js";
import { formatNumber, h } from "../lib/dom.js";
import { local, t } from "../lib/words.js";

const PAGE_ROWS = 32;
const PAGE_COLS = 16;
const AXIS_WORDS = {
  B: "js-numbers-axis-sequence",
  H: "js-numbers-axis-head",
  K: "js-numbers-axis-kv-head",
  T: "js-numbers-axis-position",
  V: "js-numbers-axis-token",
  C: "js-numbers-axis-feature",
};

function axisWord(axis, i) {
  return AXIS_WORDS[axis] ? t(AXIS_WORDS[axis]) : t("js-numbers-axis", { axis: i });
}

/** The slice URL of a figure's download URL (/api/traces/{id}/tensors/{name}?grad=true). */
function sliceUrl(download, params) {
  const url = new URL(download, window.location.origin);
  url.pathname += "/slice";
  for (const [key, value] of Object.entries(params))
    if (value !== null && value !== "") url.searchParams.set(key, value);
  return url.pathname + url.search;
}

const QUOTE = '"';

function csvCell(text) {
  const s = String(text);
  const quoted = s.includes(QUOTE) || s.includes(",") || s.includes("\n");
  return quoted ? `${QUOTE}${s.replaceAll(QUOTE, QUOTE + QUOTE)}${QUOTE}` : s;
}

/** CSV of page's cells rows r0..r1 × cols c0..c1 (indices within the page), labels first. */
export function selectionCsv(page, [r0, r1], [c0, c1]) {
  const lines = [["", ...page.col_labels.slice(c0, c1 + 1)].map(csvCell).join(",")];
  for (let r = r0; r <= r1; r++) {
    const values = page.values[r].slice(c0, c1 + 1).map((v) => (v === null ? "" : String(v)));
    lines.push([csvCell(page.row_labels[r]), ...values].join(","));
  }
  return lines.join("\n");
}

/** [[r0, r1], [c0, c1]]: the cells picked (anchor to end, inclusive), or the whole page. */
function selection(state, page) {
  if (!state.anchor)
    return [
      [0, page.values.length - 1],
      [0, page.col_labels.length - 1],
    ];
  const span = (i) => [Math.min(state.anchor[i], state.end[i]), Math.max(state.anchor[i], state.end[i])];
  return [span(0), span(1)];
}

/** One page as a table: column labels across, row labels down; `picked(r, c)` highlights. */
function pageTable(page, picked) {
  const head = h(
    "tr",
    {},
    h("th", {}),
    page.col_labels.map((label) => h("th", { scope: "col", text: label })),
  );
  const body = page.values.map((row, r) =>
    h(
      "tr",
      {},
      h("th", { scope: "row", text: page.row_labels[r] }),
      row.map((v, c) =>
        h("td", {
          text: formatNumber(v),
          title: v === null ? t("js-numbers-not-finite") : local(String(v)),
          className: picked(r, c) ? "picked" : null,
          dataset: { r: String(r), c: String(c) },
        }),
      ),
    ),
  );
  return h("table", { className: "numbers" }, h("thead", {}, head), h("tbody", {}, body));
}

function pageStatus(page, hasLead) {
  const values = {
    first: page.rows[0],
    last: page.rows[1] - 1,
    rows: page.n_rows,
    firstColumn: page.cols[0],
    lastColumn: page.cols[1] - 1,
    columns: page.n_cols,
  };
  return hasLead ? t("js-numbers-page-at", { ...values, at: page.at.join(", ") }) : t("js-numbers-page", values);
}

/** The pager for the tensor of a figure (its `download` URL and `stats`); an element. */
export function numbersPager(download, stats) {
  const shape = stats.shape;
  const axes = stats.axes.length === shape.length ? stats.axes : shape.map(() => "");
  const lead = shape.slice(0, Math.max(0, shape.length - 2));
  const state = { at: lead.map(() => 0), row: 0, col: 0, find: null, page: null, anchor: null, end: null };
  const status = h("p", { className: "numbers-status", role: "status" });
  const tableBox = h("div", {
    className: "table-scroll",
    tabindex: "0",
    role: "region",
    "aria-label": t("js-numbers-region"),
  });
  const leadInputs = lead.map((size, i) =>
    h("input", {
      type: "number",
      min: "0",
      max: String(size - 1),
      value: "0",
      "aria-label": axisWord(axes[i], i),
    }),
  );
  const jumpKind = h(
    "select",
    { "aria-label": t("js-numbers-jump-kind") },
    [
      ["row", t("js-numbers-jump-row")],
      ["column", t("js-numbers-jump-column")],
      ["token", t("js-numbers-jump-token")],
      ["token-cols", t("js-numbers-jump-token-columns")],
    ].map(([value, text]) => h("option", { value, text })),
  );
  const jumpValue = h("input", {
    type: "text",
    size: "10",
    "aria-label": t("js-numbers-jump-value"),
    className: "jump-value",
  });

  /** rows/cols past the end are cut to it (the server refuses a stop past the axis). */
  function clampAndLoad() {
    const p = state.page;
    const nRows = p ? p.n_rows : shape.length >= 2 ? shape[shape.length - 2] : shape[0];
    const nCols = p ? p.n_cols : shape.length >= 2 ? shape[shape.length - 1] : 1;
    state.row = Math.max(0, Math.min(state.row, nRows - 1));
    state.col = Math.max(0, Math.min(state.col, nCols - 1));
    const rowStop = Math.min(nRows, state.row + PAGE_ROWS);
    const colStop = Math.min(nCols, state.col + PAGE_COLS);
    return loadRange(`${state.row}:${rowStop}`, `${state.col}:${colStop}`);
  }

  async function loadRange(rows, cols) {
    const params = {
      grad: new URL(download, window.location.origin).searchParams.get("grad"),
      at: state.at.length ? state.at.join(",") : null,
      rows,
      cols, // with `find`: the page's size, moved to the token
      find: state.find,
      find_in: state.find ? state.findIn : null,
    };
    status.textContent = t("js-training-loading");
    try {
      const page = await request(sliceUrl(download, params));
      Object.assign(state, { page, row: page.rows[0], col: page.cols[0], find: null, anchor: null, end: null });
      render();
    } catch (error) {
      state.find = null;
      status.textContent = error.message;
    }
  }

  function render() {
    const [rows, cols] = selection(state, state.page);
    const picked = state.anchor ? (r, c) => r >= rows[0] && r <= rows[1] && c >= cols[0] && c <= cols[1] : () => false;
    tableBox.replaceChildren(pageTable(state.page, picked));
    status.textContent = pageStatus(state.page, lead.length > 0);
  }

  tableBox.addEventListener("click", (event) => {
    const cell = event.target.closest("td");
    if (!cell) return;
    const at = [Number(cell.dataset.r), Number(cell.dataset.c)];
    if (event.shiftKey && state.anchor) state.end = at;
    else state.anchor = state.end = at;
    render();
  });

  function copy() {
    if (!state.page) return;
    const [rows, cols] = selection(state, state.page);
    const csv = selectionCsv(state.page, rows, cols);
    copied.value = csv;
    copied.hidden = false;
    navigator.clipboard?.writeText(csv).catch(() => {});
    status.textContent = t("js-numbers-copied", { count: (rows[1] - rows[0] + 1) * (cols[1] - cols[0] + 1) });
  }
  const copied = h("textarea", {
    className: "numbers-csv",
    readonly: true,
    rows: "3",
    hidden: true,
    "aria-label": "CSV",
  });

  function jump() {
    const value = jumpValue.value.trim();
    if (!value) return;
    if (jumpKind.value.startsWith("token")) {
      state.find = value;
      state.findIn = jumpKind.value === "token-cols" ? "cols" : null;
    } else if (jumpKind.value === "row") state.row = Number.parseInt(value, 10) || 0;
    else state.col = Number.parseInt(value, 10) || 0;
    clampAndLoad();
  }
  const move = (dr, dc) => () => {
    state.row += dr;
    state.col += dc;
    clampAndLoad();
  };
  for (const [i, input] of leadInputs.entries())
    input.addEventListener("change", () => {
      state.at[i] = Math.max(0, Math.min(lead[i] - 1, Number.parseInt(input.value, 10) || 0));
      clampAndLoad();
    });
  jumpValue.addEventListener("keydown", (event) => event.key === "Enter" && jump());
  const button = (text, onclick, label) =>
    h("button", { type: "button", className: "button-quiet", text, onclick, "aria-label": label });
  const controls = h(
    "div",
    { className: "numbers-controls" },
    leadInputs.map((input, i) => h("label", {}, `${axisWord(axes[i], i)} `, input)),
    button("▲", move(-PAGE_ROWS, 0), t("js-numbers-previous-rows")),
    button("▼", move(PAGE_ROWS, 0), t("js-numbers-next-rows")),
    button("◀", move(0, -PAGE_COLS), t("js-numbers-previous-columns")),
    button("▶", move(0, PAGE_COLS), t("js-numbers-next-columns")),
    h("label", {}, `${t("js-numbers-jump")} `, jumpKind, " ", jumpValue),
    button(t("js-numbers-go"), jump, t("js-numbers-go.label")),
    button(t("js-numbers-copy"), copy, t("js-numbers-copy.label")),
  );
  const element = h("div", { className: "numbers-pager" }, controls, status, tableBox, copied);
  clampAndLoad();
  return element;
}
