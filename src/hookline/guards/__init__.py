"""Guards an API request passes: its key's rate limit and its ``Idempotency-Key``."""
