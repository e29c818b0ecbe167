"""The domain modules of deliveries (``deliveries``, ``recovery``, ``queue``, ``webhook_stats``)
are tested on the delivery tests' databases: the ``env`` fixture (both backends) and its
helpers, which write webhooks, events and deliveries as the worker would."""

from tests.delivery.conftest import env

__all__ = ["env"]
