"""bench.layers charges each py-spy sample to the layer of its deepest frame that has one."""

from __future__ import annotations

from bench.layers import charge

_ROOT = (
    "run_asgi (uvicorn/protocols/http/httptools_impl.py:422);"
    "Starlette.__call__ (starlette/applications.py:96)"
)
_MIDDLEWARE = f"{_ROOT};_Exchange.run (hookline/api/front.py:82)"
_HANDLER = f"{_MIDDLEWARE};create_contact (hookline/api/contacts.py:60)"


def test_samples_go_to_the_deepest_frame_with_a_layer() -> None:
    raw = "\n".join(
        [
            f"{_ROOT} 3",
            f"{_MIDDLEWARE} 2",
            f"{_HANDLER};commit_rows (hookline/storage/db.py:430);execute (sqlite3:1) 5",
            f"{_HANDLER};validate_python (pydantic/type_adapter.py:1) 4",
            f"{_MIDDLEWARE};emit (logging/__init__.py:1);format (hookline/logs.py:30) 1",
            # A thread waiting for fsync is not CPU: dropped.
            "worker (threading.py:1);pysqlite_connection_commit_impl (connection.c:571);"
            "pthread_cond_timedwait (libc.so.6) 7",
        ]
    )
    assert charge(raw) == {
        "routing and runner (FastAPI, Starlette, DirectRoute)": 3,
        "front door (request id, limits, body, rate limit)": 2,
        "storage (SQL, commit)": 5,
        "validation (schemas, phone, e-mail)": 4,
        "logging": 1,
    }
