"""Webhook delivery: outbox dispatch, leased claims, signed POSTs, retries (see docs/webhooks.md).

What the rest of hookline uses, each from its module:

* ``make_wakeup(settings, db)`` -> ``Wakeup``: ``db`` calls it after every commit of a
  transaction that recorded an event or made a delivery due (``storage.db``).
* ``Worker(settings, db, wakeup=...)`` with ``await start()`` / ``await stop()``.
* ``validate_webhook_url(url, allow_private)`` at webhook create/patch (raises ``UnsafeURL``).
* ``manager``: deliveries for the API (list, detail, retry, cancel, test events).

Nothing is imported here: importing one module of the package (``signing``, for `hookline
listen`) must not import the worker and, through it, prometheus_client, which `hookline serve
--workers N` needs to import only after it has chosen prometheus_client's multiprocess mode.
"""
