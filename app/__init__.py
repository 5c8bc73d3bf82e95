"""xt's web app: FastAPI routes -> xt_core -> Plotly figures -> JSON and Jinja2 pages."""
