"""The clients in clients/ are exactly what ``make clients`` generates from the app now, and
the OpenAPI document they come from is the same on every run."""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

from tests.clients.conftest import CLIENTS, REPOSITORY

GENERATOR = REPOSITORY / "scripts" / "generate_clients.py"
# What the generator writes; the rest of clients/ is written by hand.
GENERATED = ("openapi.json", "python", "typescript/src/schema.ts")


def _generate(*args: str, seed: str = "0") -> subprocess.CompletedProcess[bytes]:
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, str(GENERATOR), *args],
        env={**env, "PYTHONHASHSEED": seed},
        capture_output=True,
        timeout=600,
        check=False,
        cwd=REPOSITORY,
    )


def _files(root: Path) -> set[str]:
    if root.is_file():
        return {""}
    return {
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def _committed_files(root: Path) -> set[str]:
    """The files of clients/ as git sees them, tracked or new: never what .gitignore leaves
    out, such as the build/ and *.egg-info that `pip install ./clients/python` writes there."""
    if root.is_file():
        return {""}
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", "."],
        cwd=root,
        capture_output=True,
        check=True,
    )
    return {name for name in listed.stdout.decode().split("\0") if name}


def _differences(part: str, fresh_root: Path) -> list[str]:
    """The files of ``part`` (a file or a folder) that differ between clients/ and fresh."""
    committed, fresh = CLIENTS / part, fresh_root / part
    found = []
    for name in sorted(_committed_files(committed) | _files(fresh)):
        old, new = committed / name, fresh / name
        where = str(Path(part, name))
        if not old.is_file() or not new.is_file():
            found.append(f"{where}: only in {'the fresh output' if new.is_file() else 'clients/'}")
        elif not filecmp.cmp(old, new, shallow=False):
            found.append(f"{where}: differs")
    return found


def test_the_committed_clients_are_what_make_clients_generates(tmp_path: Path) -> None:
    result = _generate(str(tmp_path))
    assert result.returncode == 0, result.stderr.decode()
    stale = [difference for part in GENERATED for difference in _differences(part, tmp_path)]
    assert stale == [], (
        f"clients/ is not what `make clients` generates now (run it; a file only in clients/ "
        f"is one it no longer writes): {stale}"
    )


def test_the_openapi_document_is_the_same_on_every_run() -> None:
    """Hash randomisation changes set and dict orders; the document must not depend on them."""
    first, second = (_generate("--openapi", seed=seed) for seed in ("1", "2"))
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert first.stdout == second.stdout
    assert first.stdout == (CLIENTS / "openapi.json").read_bytes()
