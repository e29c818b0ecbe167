"""Every statement of hookline, by resource: one module per resource (``contacts``, ``calls``,
``webhooks``, ...), each a list of named, module-level ``Query``s (``storage.statements``),
``QueryShapes`` where a statement's shape varies with its input, or a small function that
builds one. The layers above run them by name and pass parameters
(``await conn.execute(queries.contacts.BY_ID, {...})``); they never build SQL, import
SQLAlchemy or see a table (docs/architecture.md, "How to add... a statement").

Nothing is imported here: a caller imports the module of its resource.
"""
