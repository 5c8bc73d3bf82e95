// Formulas never overflow their box. A rule too wide for its box is broken into lines where
// the LaTeX put wide spaces (\quad: "a = b, \quad c = d \quad⟹\quad e = f" becomes three
// lines), then before its top-level relations (=, ←), and whatever is still too wide is
// scaled down to fit. Refitted when the box changes width (window, Large type, presenter mode).

const MATHML = "http://www.w3.org/1998/Math/MathML";
const RELATIONS = new Set(["=", "≈", "←", "+=", "≡"]);
const ARROWS = new Set(["⟹", "⇒", "→", "⟶", "⇔"]);
const MIN_SCALE = 0.3; // below this a rule is unreadable anyway; MIN_SCALE still fits 4× the box

/** The top-level pieces of a <math>: its row's children. */
function topRow(math) {
  const only = math.children.length === 1 ? math.firstElementChild : null;
  return only && only.localName === "mrow" ? only : math;
}

function isWideSpace(node) {
  return node.localName === "mspace" && Number.parseFloat(node.getAttribute("width") || "0") >= 1;
}

function holdsWideSpace(node) {
  return [...node.children].some((child) => isWideSpace(child) || (isGroup(child) && holdsWideSpace(child)));
}

function isGroup(node) {
  return node.localName === "mrow" || node.localName === "mstyle";
}

/** The row's children, with every group (mrow, or mstyle: a \textstyle runs to the end of
 * its group and so may hold the rest of the formula) that holds a wide space opened up; an
 * mstyle's style goes with each run of its children between wide spaces. */
function flatten(nodes) {
  const out = [];
  for (const node of nodes) {
    if (!isGroup(node) || !holdsWideSpace(node)) {
      out.push(node);
      continue;
    }
    let run = null;
    for (const child of flatten([...node.children])) {
      if (node.localName === "mrow" || isWideSpace(child)) {
        out.push(child);
        run = null;
        continue;
      }
      if (!run) {
        run = node.cloneNode(false);
        out.push(run);
      }
      run.append(child.cloneNode(true));
    }
  }
  return out;
}

/** Children split at wide spaces (mspace ≥ 1em, from \quad): [{nodes, space}], `space` the
 * spacing that stood before the part (kept when the part shares a line with the one before). */
function spaceParts(nodes) {
  const parts = [{ nodes: [], space: null }];
  for (const node of nodes) {
    if (isWideSpace(node)) parts.push({ nodes: [], space: node });
    else parts[parts.length - 1].nodes.push(node);
  }
  return parts.filter((part) => part.nodes.length);
}

/** An arrow standing alone between wide spaces ("… \quad⟹\quad …") starts the line of what it leads to. */
function gluedArrows(parts) {
  const out = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    const arrow = part.nodes.length === 1 && ARROWS.has(part.nodes[0].textContent.trim());
    const next = parts[i + 1];
    if (arrow && next) {
      out.push({ nodes: [...part.nodes, ...(next.space ? [next.space] : []), ...next.nodes], space: part.space });
      i++;
    } else {
      out.push(part);
    }
  }
  return out;
}

/** A part split before each top-level relation but its first: "a = b = c" -> "a = b", "= c". */
function relationParts(part) {
  const out = [{ nodes: [], space: part.space }];
  let seen = 0;
  for (const node of part.nodes) {
    const relation = node.localName === "mo" && RELATIONS.has(node.textContent.trim());
    if (relation && seen++ > 0 && out[out.length - 1].nodes.length) out.push({ nodes: [], space: null });
    out[out.length - 1].nodes.push(node);
  }
  return out;
}

/** The nodes of consecutive parts on one line, with their spacing between them. */
function joined(parts) {
  return parts.flatMap((part, i) => (i > 0 && part.space ? [part.space, ...part.nodes] : part.nodes));
}

function lineOf(nodes, continued) {
  const math = document.createElementNS(MATHML, "math");
  math.setAttribute("display", "block");
  math.classList.add("math-line");
  if (continued) math.classList.add("continued");
  const row = document.createElementNS(MATHML, "mrow");
  for (const node of nodes) row.append(node.cloneNode(true));
  math.append(row);
  return math;
}

/** How far right of the box's left edge the content of a <math> line reaches (a block <math>
 * is as wide as its box; a continued line's indent counts). */
function extent(math, box) {
  let right = Number.NEGATIVE_INFINITY;
  for (const child of topRow(math).children) right = Math.max(right, child.getBoundingClientRect().right);
  return right > Number.NEGATIVE_INFINITY ? right - box.getBoundingClientRect().left : 0;
}

function fits(box) {
  return box.scrollWidth <= box.clientWidth;
}

/** Lines of `parts` packed greedily: a part joins the line before while the line fits. */
function packLines(box, parts) {
  const lines = [];
  let current = [];
  for (const part of parts) {
    const probe = lineOf(joined([...current, part]), lines.length > 0);
    box.replaceChildren(probe);
    if (current.length && extent(probe, box) > box.clientWidth) {
      lines.push(current);
      current = [part];
    } else {
      current.push(part);
    }
  }
  if (current.length) lines.push(current);
  return lines.map((line, i) => lineOf(joined(line), i > 0));
}

/** Fits the formula in `box` (a .math holding one server-made <math>) to the box's width. */
export function fitMath(box) {
  if (!box.isConnected || !box.clientWidth) return;
  if (!box.dataset.source) {
    const math = box.querySelector("math");
    if (!math) return;
    box.dataset.source = "1";
    box._source = math.cloneNode(true);
  }
  box.replaceChildren(box._source.cloneNode(true));
  box.dataset.fit = "whole";
  if (fits(box)) return;
  const nodes = flatten([...topRow(box._source).children]);
  const parts = gluedArrows(spaceParts(nodes)).flatMap(relationParts);
  const lines = packLines(box, parts);
  box.replaceChildren(...lines);
  box.dataset.fit = "lines";
  // The indent is in em: it shrinks with the line, so the scale is the plain ratio.
  for (const line of lines) {
    let scale = 1;
    // Glyphs do not shrink exactly in proportion: measure again, a few times at most.
    for (let tries = 0; tries < 4 && scale > MIN_SCALE; tries++) {
      const width = extent(line, box);
      if (width <= box.clientWidth) break;
      scale = Math.max(MIN_SCALE, Math.floor(scale * (box.clientWidth / width) * 100) / 100 - 0.01 * tries);
      line.style.fontSize = `${scale}em`;
    }
  }
  if (!fits(box)) box.dataset.fit = "scaled-out"; // narrower than MIN_SCALE allows: the box scrolls
}

let observer = null;
const widths = new WeakMap();

/** Fits every formula under `root` now and again whenever its box changes width. */
export function fitFormulas(root) {
  if (!observer) {
    observer = new ResizeObserver((entries) => {
      for (const entry of entries) {
        const box = entry.target;
        const width = Math.round(entry.contentRect.width);
        if (widths.get(box) === width) continue;
        widths.set(box, width);
        fitMath(box);
      }
    });
    // Large type changes the formulas' size, not always their box's width.
    document.addEventListener("xt:typesize", () => {
      for (const box of document.querySelectorAll(".math[data-source]")) fitMath(box);
    });
  }
  for (const box of root.querySelectorAll(".math")) {
    fitMath(box);
    widths.set(box, Math.round(box.getBoundingClientRect().width));
    observer.observe(box);
  }
}
