"""The ceilings: bare Starlette endpoints on the same uvicorn settings as ``hookline serve``.

``POST /echo`` parses the JSON body and returns it with 201 (what ``POST /v1/contacts`` does,
minus auth, validation and the database); ``GET /contact`` returns a contact-shaped JSON object
(``GET /v1/contacts/{id}`` minus auth and the database); ``GET /list`` returns 50 of them.
Both use orjson, as hookline does, so the ceiling is as high as this stack allows.

    python -m bench.baseline --port 8001
"""

from __future__ import annotations

import argparse

import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from hookline.cli import server_options

CONTACT = {
    "id": "0190f5e2-7b3c-7cc1-9a52-3f1f0a4c2d11",
    "first_name": "Ada",
    "last_name": "Lovelace",
    "phone_number": "+15551234567",
    "email": "ada@example.com",
    "company": "Analytical Engines",
    "tags": ["vip", "math"],
    "notes": "Met at the conference.",
    "created_at": "2026-01-01T12:00:00.000Z",
    "updated_at": "2026-01-01T12:00:00.000Z",
}


async def echo(request: Request) -> Response:
    body = orjson.loads(await request.body())
    return Response(orjson.dumps(body), status_code=201, media_type="application/json")


async def contact(_request: Request) -> Response:
    return Response(orjson.dumps(CONTACT), media_type="application/json")


async def listing(_request: Request) -> Response:
    return Response(orjson.dumps([CONTACT] * 50), media_type="application/json")


async def ready(_request: Request) -> Response:
    return Response(b"{}", media_type="application/json")


app = Starlette(
    routes=[
        Route("/echo", echo, methods=["POST"]),
        Route("/contact", contact),
        Route("/list", listing),
        Route("/ready", ready),
    ]
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    # The same settings as `hookline serve`, so only the application differs.
    uvicorn.run(app, host="127.0.0.1", port=args.port, **server_options())


if __name__ == "__main__":
    main()
