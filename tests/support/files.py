"""Deleting the suite's big temporary trees."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def delete_tree(path: str | Path) -> None:
    """Delete ``path`` and everything under it, ignoring what is already gone.

    ``rm -rf``, not ``shutil.rmtree``: a session's PostgreSQL cluster holds ~200 databases of
    ~300 files each, and for 36,760 of them in tmpfs ``shutil.rmtree`` took 8.1 s against 1.3
    s for ``rm -rf``: most of the 7-11 s each test process spent ending its session.
    """
    if shutil.which("rm") is None:
        shutil.rmtree(path, ignore_errors=True)
        return
    subprocess.run(["rm", "-rf", "--", str(path)], check=False, capture_output=True)
