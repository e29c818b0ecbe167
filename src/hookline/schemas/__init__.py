"""Per-use request and response schemas (``ContactCreate``, ``ContactUpdate``, ``ContactOut``)."""
