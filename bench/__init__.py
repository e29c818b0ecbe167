"""hookline's benchmark harness: ``python -m bench`` (see bench/README.md)."""
