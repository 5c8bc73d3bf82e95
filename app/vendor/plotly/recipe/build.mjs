// Bundles entry.js into ../plotly-xt.min.js the way plotly.js bundles its own dist files
// (plotly.js/esbuild-config.js: an IIFE defining the global Plotly, `global` as window, ES2016),
// minified, the licences of every bundled package kept at the end of the file.
import { readFileSync } from "node:fs";
import { build } from "esbuild";

const { version } = JSON.parse(readFileSync(new URL("node_modules/plotly.js/package.json", import.meta.url)));

await build({
  entryPoints: [new URL("entry.js", import.meta.url).pathname],
  outfile: new URL("../plotly-xt.min.js", import.meta.url).pathname,
  bundle: true,
  minify: true,
  format: "iife",
  globalName: "Plotly",
  target: "es2016",
  define: { global: "window", "define.amd": "false" },
  // The only CSS in the graph is maplibre's, for map traces (registered only for them): not bundled.
  loader: { ".css": "empty" },
  legalComments: "eof",
  banner: {
    js: `/**\n* plotly.js v${version}, xt's bundle: scatter, bar, heatmap (app/vendor/plotly/README.md)\n* Copyright 2012-2026, Plotly, Inc.\n* Licensed under the MIT license\n*/`,
  },
  logLevel: "warning",
});
