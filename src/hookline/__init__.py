"""hookline: contacts, calls and signed, never-lost webhook delivery."""

__version__ = "0.1.0"

__all__ = ["__version__"]
