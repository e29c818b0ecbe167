"""The HTTP layer: one module per resource; each handler owns its transaction."""
