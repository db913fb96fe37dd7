"""The grading server: mugrade wire protocol, users and keys, gradebook pages.

`create_app(config)` builds the FastAPI app; `grader serve` runs it on uvicorn
(`--workers N` processes, which share their state through the database).
"""
from .config import ServerConfig


def create_app(config=None):
    """Imported lazily so that `ServerConfig` is usable without FastAPI installed."""
    from .app import create_app as _create
    return _create(config)


__all__ = ["ServerConfig", "create_app"]
