"""The grading server: mugrade wire protocol, users and keys, gradebook pages.

`create_app(config)` builds the FastAPI app; `grader serve` runs it on uvicorn
(`--workers N` processes, which share their state through the database).
"""
from .config import ServerConfig


def __getattr__(name):
    # app.create_app, imported on first use so that `ServerConfig` works without FastAPI installed
    if name == "create_app":
        from .app import create_app
        return create_app
    raise AttributeError(f"module 'grader.server' has no attribute {name!r}")


__all__ = ["ServerConfig", "create_app"]
