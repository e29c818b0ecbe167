"""Webhook delivery: outbox dispatch, leased claims, signed POSTs, retries (see docs/webhooks.md).

What the rest of hookline uses, each from its module:

* ``make_wakeup(settings, db)`` -> ``Wakeup``: ``db`` calls it after every commit of a
  transaction that recorded an event or made a delivery due (``storage.db``).
* ``Worker(settings, db, wakeup=...)`` with ``await start()`` / ``await stop()``.
* ``validate_webhook_url(url, allow_private)`` at webhook create/patch (raises ``UnsafeURL``).
* ``manager``: the worker's engine (fan-out, claims, outcomes, leases), and the rules the
  request side shares with it (``received_by``, ``delivery_row``, ``cancel_pending_deliveries``).
  What the API and the dashboard do with deliveries is in ``domain.deliveries``,
  ``domain.recovery``, ``domain.queue`` and ``domain.webhook_stats``.

Nothing is imported here: importing one module of the package (``signing``, for `hookline
listen`) must not import the worker and, through it, prometheus_client, which `hookline serve
--workers N` needs to import only after it has chosen prometheus_client's multiprocess mode.
"""
