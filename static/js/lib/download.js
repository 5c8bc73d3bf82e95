// A figure's numbers to take away: "Download .npy" and ".json" of the whole recorded tensor (the
// step JSON's `download`: GET /api/traces/{id}/tensors/{name}, docs/api.md), or, for a figure that
// is not one whole tensor (one op's contribution, a check), its numbers table as JSON.

import { h } from "./dom.js";
import { t } from "./words.js";

const fileName = (text) => text.replace(/[^\w.-]+/g, "_").replace(/^_+|_+$/g, "") || "figure";

/** The JSON URL of a tensor download URL (format=json beside any grad=true). */
function jsonUrl(url) {
  return `${url}${url.includes("?") ? "&" : "?"}format=json`;
}

/** The numbers table of a figure as a data: URL of JSON, made when the link is pressed. */
function tableLink(figure) {
  const link = h("a", {
    className: "figure-download-link",
    href: "#",
    download: `${fileName(figure.id)}.json`,
    text: t("js-download-table"),
    title: t("js-download-table.title"),
  });
  link.addEventListener("click", () => {
    const { columns, index, rows } = figure.table;
    const body = JSON.stringify({ figure: figure.id, title: figure.title, columns, index, rows });
    link.href = `data:application/json;charset=utf-8,${encodeURIComponent(body)}`;
  });
  return link;
}

/** The download links under a figure; null for a figure with neither a tensor nor a table. */
export function downloadLinks(figure) {
  if (figure.download) {
    return h(
      "p",
      { className: "figure-download" },
      `${t("js-download-every")} `,
      h("a", { className: "figure-download-link", href: figure.download, download: "", text: ".npy" }),
      " · ",
      h("a", {
        className: "figure-download-link",
        href: jsonUrl(figure.download),
        download: `${fileName(figure.id)}.json`,
        text: ".json",
      }),
    );
  }
  if (figure.table) return h("p", { className: "figure-download" }, tableLink(figure));
  return null;
}
