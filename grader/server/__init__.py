"""The grading server: the mugrade wire protocol, users and keys, the gradebook.

It is layered; each package imports only the ones listed before it:

- `answers/`   what a submitted value is and when it is right (wire format, comparison)
- `store/`     the database: schema, migrations, the one writer thread, protocol records
- `accounts/`  users, their keys and browser sessions
- `gradebook/` the class's scores from server submissions and imported grade-batch results
- `web/`       the HTTP side: the app factory, the protocol routes, pages, request limits

`config.py` holds every setting (`ServerConfig`), `commands.py` the CLI
commands (`grader serve`, `users`, `gradebook`). `web.app.create_app(config)`
builds the app; `grader serve` runs it on uvicorn (`--workers N` processes,
which share their state through the database).

This file imports nothing, so importing any part does not import the rest.
"""
