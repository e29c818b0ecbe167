"""Regenerates the API clients in clients/ from the app's OpenAPI document (``make clients``).

    python scripts/generate_clients.py          # into clients/
    python scripts/generate_clients.py OUT      # into OUT/ (the suite's up-to-date check)
    python scripts/generate_clients.py --openapi    # only the document, to stdout

Writes OUT/openapi.json (the document, deterministic: keys sorted, two-space indent), the
Python client OUT/python (``openapi-python-client``, pinned in pyproject.toml's ``clients``
extra) and the TypeScript types OUT/typescript/src/schema.ts (``openapi-typescript``, pinned
in clients/typescript/package-lock.json; ``npm ci`` there first). The rest of
clients/typescript (the typed ``openapi-fetch`` client, its smoke test) is written by hand.
"""

from __future__ import annotations

import copy
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

from hookline.app import create_app
from hookline.schemas.common import JSON_VALUE
from hookline.settings import Settings

REPOSITORY = Path(__file__).resolve().parents[1]
CLIENTS = REPOSITORY / "clients"
PYTHON_CONFIG = CLIENTS / "python-config.yaml"
TYPESCRIPT = CLIENTS / "typescript"
OPENAPI_TYPESCRIPT = TYPESCRIPT / "node_modules" / ".bin" / "openapi-typescript"
BIN = Path(sys.executable).parent


def openapi_document() -> dict[str, Any]:
    # No database is opened: the document only needs the routes.
    document: dict[str, Any] = create_app(Settings(database_url="sqlite://")).openapi()
    return document


def dump(document: dict[str, Any]) -> bytes:
    return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def for_generators(document: dict[str, Any]) -> dict[str, Any]:
    """The document as given to the generators, neither of which handles a recursive union
    (openapi-python-client cannot parse it; openapi-typescript writes a type alias that
    TypeScript refuses as circular): ``JsonValue`` (the values of a call's ``metadata``)
    becomes any JSON value. The server still enforces its rules (64-bit integers, no control
    characters); clients/openapi.json keeps the exact document."""
    adapted = copy.deepcopy(document)
    adapted["components"]["schemas"][JSON_VALUE] = {"description": "Any JSON value."}
    return adapted


def generate(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    document = openapi_document()
    (out / "openapi.json").write_bytes(dump(document))
    with tempfile.TemporaryDirectory(prefix="hookline-openapi-") as tmp:
        source = Path(tmp) / "openapi.json"
        source.write_bytes(dump(for_generators(document)))
        _python_client(source, out / "python")
        _typescript_types(source, out / "typescript" / "src" / "schema.ts")


def _python_client(source: Path, target: Path) -> None:
    _run(
        [
            str(BIN / "openapi-python-client"),
            "generate",
            "--path",
            str(source),
            "--config",
            str(PYTHON_CONFIG),
            "--meta",
            "setup",
            "--output-path",
            str(target),
            "--overwrite",
            "--fail-on-warning",
        ]
    )


def _typescript_types(source: Path, target: Path) -> None:
    if not OPENAPI_TYPESCRIPT.exists():
        raise SystemExit(f"{OPENAPI_TYPESCRIPT} is missing: run `npm ci` in {TYPESCRIPT}")
    target.parent.mkdir(parents=True, exist_ok=True)
    # Request fields with a default stay optional (the default-non-nullable rule would make
    # every one required in the bodies a client sends).
    command = [str(OPENAPI_TYPESCRIPT), str(source), "--output", str(target)]
    _run([*command, "--default-non-nullable", "false"])


def _run(command: list[str]) -> None:
    # The post hooks call ruff by name: the virtualenv's, the version pinned for the project.
    env = {"PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin", "NO_COLOR": "1"}
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{command[0]} failed:\n{result.stdout}\n{result.stderr}")


def main(args: list[str]) -> None:
    if args == ["--openapi"]:
        sys.stdout.buffer.write(dump(openapi_document()))
    else:
        generate(Path(args[0]) if args else CLIENTS)


if __name__ == "__main__":
    main(sys.argv[1:])
