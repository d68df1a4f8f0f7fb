"""The API's interactive docs at /docs, served whole by Engram itself (issue 20 item 14).

FastAPI's own /docs page loads Swagger UI from a CDN: blank offline, and a request to a third
party from a program that promises to send nothing anywhere. fastapi-offline serves the same
Swagger UI from the copy of its assets it ships in its wheel (under /static-offline-docs).
Swagger UI's validator badge, which would send the document's address to
validator.swagger.io from any host but localhost, is turned off, and so is /redoc.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

DOCS_URL = "/docs"


def new_app(**options: Any) -> FastAPI:
    """A FastAPI application (FastAPI's own arguments) whose docs load nothing from
    another host."""
    return FastAPIOffline(
        docs_url=DOCS_URL,
        redoc_url=None,
        swagger_ui_parameters={"validatorUrl": None},
        **options,
    )
