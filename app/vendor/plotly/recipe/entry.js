// plotly.js with the trace types xt draws: scatter (in the core), bar and heatmap, and the core's
// components (annotations, shapes, colour bars, legends, hover, the mode bar, subplots).
// app/figures may emit no other type: tests/app/test_assets.py checks the views.
"use strict";

const Plotly = require("plotly.js/lib/core");

Plotly.register([require("plotly.js/lib/bar"), require("plotly.js/lib/heatmap")]);

module.exports = Plotly;
