"""/docs: FastAPI's Swagger UI served offline, from the files the fastapi-offline package ships
(Swagger UI 5, which reads OpenAPI 3.1; FastAPI's default page loads them from a CDN, which this
app never uses). Only its static files are used, not its FastAPI subclass."""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

SWAGGER_DIR = Path(fastapi_offline.__file__).resolve().parent / "static"
SWAGGER_PREFIX = "/assets/swagger"

router = APIRouter(include_in_schema=False)


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url=request.app.openapi_url,
        title=f"{request.app.title} — API",
        oauth2_redirect_url="/docs/oauth2-redirect",
        swagger_js_url=f"{SWAGGER_PREFIX}/swagger-ui-bundle.js",
        swagger_css_url=f"{SWAGGER_PREFIX}/swagger-ui.css",
        swagger_favicon_url=f"{SWAGGER_PREFIX}/favicon.png",
    )


@router.get("/docs/oauth2-redirect")
async def swagger_ui_redirect() -> HTMLResponse:
    return get_swagger_ui_oauth2_redirect_html()


def swagger_files() -> StaticFiles:
    return StaticFiles(directory=SWAGGER_DIR)
