"""Webhook delivery: outbox dispatch, leased claims, signed POSTs, retries (see docs/webhooks.md).

What the rest of hookline uses:

* ``make_wakeup(settings, db)`` -> ``Wakeup``: ``db`` calls it after every commit of a
  transaction that recorded an event or made a delivery due (``storage.db``).
* ``Worker(settings, db, wakeup=...)`` with ``await start()`` / ``await stop()``.
* ``validate_webhook_url(url, allow_private)`` at webhook create/patch (raises ``UnsafeURL``).
* ``manager``: deliveries for the API (list, detail, retry, cancel, test events).
"""
