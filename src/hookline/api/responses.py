"""``JSONResponse``: orjson-rendered, for handlers that build their body as plain dicts.

Handlers return these directly so FastAPI skips re-validating the body against the response
model (the model still documents it in OpenAPI); orjson is the fastest encoder we measured.
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import JSONResponse as StarletteJSONResponse


# A subclass of Starlette's JSONResponse so FastAPI documents the response model in OpenAPI
# (for any other Response class it documents the body as a plain string).
class JSONResponse(StarletteJSONResponse):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)
