"""Process-wide settings for the long-running commands (``hookline serve``, ``hookline worker``)."""

from __future__ import annotations

import gc

# CPython collects the young generation every 700 allocations by default. A request allocates
# thousands of short-lived containers, almost all freed by reference counting before any
# collection could matter, so the default threshold mostly pays for scanning the survivors of
# requests still in flight. 20,000 measured 11% less CPU per POST /v1/contacts (docs/benchmarks.md).
YOUNG_GENERATION_THRESHOLD = 20_000


def settle_heap() -> None:
    """Call once start-up has imported and built everything, just before serving.

    Freezing moves every object alive now (modules, classes, the app, compiled statements: about
    145,000 objects once ``hookline serve`` has started) out of the collector's reach. Without it,
    full collections under load took ~100 ms each with the event loop stopped (docs/benchmarks.md,
    change 15).
    """
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, middle, old)
