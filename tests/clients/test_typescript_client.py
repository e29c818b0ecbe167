"""The TypeScript client (clients/typescript: openapi-fetch over the generated types) against
a live server: its smoke test compiles with ``tsc`` (strict: the generated types must fit the
calls it makes), runs under Node.js, and what it did is checked on the server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx

from tests.clients.conftest import CLIENTS, Live

TYPESCRIPT = CLIENTS / "typescript"
NODE_MODULES = TYPESCRIPT / "node_modules"


def _compiled(out: Path) -> Path:
    """The package compiled into ``out`` (not into the tree), runnable by Node there."""
    tsc = NODE_MODULES / ".bin" / "tsc"
    assert tsc.exists(), "run `npm ci` in clients/typescript (make does)"
    compiled = subprocess.run(
        [str(tsc), "-p", str(TYPESCRIPT / "tsconfig.json"), "--outDir", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    # ES modules (as in the package.json) that find openapi-fetch where npm ci put it.
    (out / "package.json").write_text('{"type": "module"}\n')
    (out / "node_modules").symlink_to(NODE_MODULES)
    return out / "test" / "smoke.js"


def test_the_typescript_client_creates_lists_and_deletes_contacts_and_webhooks(
    live: Live, tmp_path: Path
) -> None:
    smoke = _compiled(tmp_path)
    ran = subprocess.run(
        ["node", str(smoke), live.base_url, live.account.key],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    done = json.loads(ran.stdout.strip().splitlines()[-1])

    with httpx.Client(base_url=live.base_url, headers=live.account.headers) as http:
        assert http.get(f"/v1/contacts/{done['contact']}").status_code == 404
        assert http.get(f"/v1/webhooks/{done['webhook']}").status_code == 404
        events = http.get("/v1/events").json()
    assert {e["type"] for e in events if e["data"]["id"] == done["contact"]} == {
        "contact.created",
        "contact.deleted",
    }
