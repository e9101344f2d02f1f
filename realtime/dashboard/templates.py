"""The dashboard's Jinja environment: templates beside this module, HTML autoescaped.

Every value a page shows comes from the database (names, evidence, transcript text a player
said), so escaping is on for every template, not opted into per value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

TEMPLATE_DIR = Path(__file__).with_name("templates")
STATIC_DIR = Path(__file__).with_name("static")

ENV = Environment(
    loader=FileSystemLoader(TEMPLATE_DIR),
    autoescape=select_autoescape(["html"]),
    undefined=StrictUndefined,  # a misspelt name fails the page (and its test), not blanks
    trim_blocks=True,
    lstrip_blocks=True,
)
ENV.filters["tojson_attr"] = lambda v: json.dumps(v, default=str)

# Where the gate leaves this request's double-submit token for the pages to embed.
CSRF_STATE = "glyphoxa_csrf"


def render_page(name: str, **context: Any) -> str:
    return ENV.get_template(name).render(**context)


def page(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """A rendered template with what every page needs (the CSRF token, the campaign)."""
    context.setdefault("campaign", None)
    token = str(request.scope.get("state", {}).get(CSRF_STATE, ""))
    html = render_page(name, request=request, csrf_token=token, **context)
    return HTMLResponse(html, status_code=status_code)
