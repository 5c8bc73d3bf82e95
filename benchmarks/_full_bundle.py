"""The app serving the full plotly.js bundle of the Python plotly package (what xt served before
the cartesian bundle) at the usual URL: the comparison of `benchmarks/first_figure.py --compare-full`.

    uvicorn benchmarks._full_bundle:app"""

from __future__ import annotations

from pathlib import Path

import plotly

from app.routes import assets

FULL_PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
assets.PLOTLY_JS = FULL_PLOTLY_JS  # read by the bundle's first build, below

from app.main import app  # noqa: E402

__all__ = ["app"]
