"""Routes, one module per area: api (JSON), pages (HTML), assets (static files, plotly.js)."""
