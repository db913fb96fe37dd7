"""The app factory and the services every route shares.

Errors are plain text with one line saying what is wrong and how to fix it
(mugrade clients print the body as is). No input reaches a 500: routes
validate by hand and unexpected exceptions still answer a short text.
"""

import asyncio
import contextlib
import gc
import logging
import os
import re
import sys
import time
from dataclasses import dataclass
from typing import Optional

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import PlainTextResponse
from sqlalchemy.exc import DBAPIError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from grader.server.accounts import users
from grader.server.config import CONFIG_ENV, ServerConfig
from grader.server.store import protocol
from grader.server.store.db import Checkpointer, StorageGuard, StorageLost, make_engine
from grader.server.store.writer import Writer, WriterStopped

from . import api, pages
from .limits import BodyLimit, BodyTooLarge, LocalRateLimiter, SharedRateLimiter
from .refused import Refused

log = logging.getLogger("grader.server")
# Pages and large answers are read and judged in worker threads. Python lets a thread keep
# the GIL for up to this long while the event loop waits to answer everyone else (the
# default, 5 ms, let four /me tabs add tens of ms to other students' submit_test).
GIL_SWITCH_SECONDS = 0.001
_KEY_IN_URL = re.compile(r"(user_key=)[^&\s\"]*", re.IGNORECASE)


class RedactKeys(logging.Filter):
    """Keys must never reach a log: the access log prints URLs, and a mugrade
    client sends its key in the query string."""

    def filter(self, record):
        if isinstance(record.args, tuple):
            record.args = tuple(_KEY_IN_URL.sub(r"\1[redacted]", a) if isinstance(a, str) else a for a in record.args)
        if isinstance(record.msg, str):
            record.msg = _KEY_IN_URL.sub(r"\1[redacted]", record.msg)
        return True


def redact_logs():
    for name in ("uvicorn.access", "uvicorn.error", "grader.server"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactKeys) for f in logger.filters):
            logger.addFilter(RedactKeys())


@dataclass
class Services:
    config: ServerConfig

    def __post_init__(self):
        self.engine = make_engine(self.config.db_url)
        self.guard = StorageGuard(self.engine)
        self.writer = Writer(self.engine, self.config.max_batch, self.guard)
        self.checkpointer = Checkpointer(self.engine, guard=self.guard)
        self.limiter = SharedRateLimiter(self.engine, self.config.rate_per_second, self.config.rate_burst, self.guard)
        # Sign-ins per key share the limiter's table; a key's bucket there is its negated id.
        self.login_limiter = SharedRateLimiter(
            self.engine, self.config.login_per_minute / 60.0, self.config.login_per_minute, self.guard
        )
        per_address = self.config.login_per_minute_per_address
        self.login_by_address = LocalRateLimiter(per_address / 60.0, per_address)
        self.pages_by_session = LocalRateLimiter(self.config.pages_per_second, self.config.pages_burst)
        self.answer_bytes = LocalRateLimiter(self.config.answer_bytes_per_second, self.config.answer_bytes_burst)
        self._users = {}  # key hash -> (user, time read)
        self.pages = protocol.LRU(self.config.page_cache_entries)  # (page, whose) -> (version, html)
        self.rendering = {}  # (page, whose), version -> the task rendering it
        self._submissions = protocol.LRU(100_000)
        self._publications = protocol.LRU(512)
        self._loading = {}  # publication id -> the task loading it

    async def read(self, fn, *args):
        """Run a read query in a worker thread, so the event loop never waits on the database."""

        def call():
            with self.engine.connect() as conn:
                return fn(conn, *args)

        return await run_in_threadpool(call)

    async def user_for_key(self, key: str):
        digest, t = users.hash_key(key), time.monotonic()
        hit = self._users.get(digest)
        if hit and t - hit[1] < users.KEY_CACHE_SECONDS:  # a revoked key stops working within it
            return hit[0]
        user = await self.read(users.find_user, key)
        if user:
            self._users[digest] = (user, t)
        return user

    async def authenticate(self, request: Request, user_key: Optional[str]):
        """The user of the request's key (query `user_key` or `Authorization: Bearer`), rate limited."""
        key = user_key or _bearer(request)
        if not key:
            raise Refused(401, "missing key: pass ?user_key=KEY or an 'Authorization: Bearer KEY' header")
        user = await self.user_for_key(key)
        if user is None:
            raise Refused(401, "unknown key: check the key your instructor gave you")
        wait = await self.limiter.retry_after(user.id)
        if wait:
            raise Refused(429, f"too many requests for this key: retry in {wait} s", {"Retry-After": str(wait)})
        return user

    def quota(self, user) -> int:
        """The storage quota of a key in bytes; instructors have none."""
        return 0 if user.is_instructor else self.config.quota_bytes

    async def write(self, fn, *args):
        """Run a small write outside the group writer (sessions), refused when the database is lost."""

        def call():
            self.guard.check()
            with self.engine.begin() as conn:
                return fn(conn, *args)

        return await run_in_threadpool(call)

    async def submission(self, submission_id: int):
        sub = self._submissions.get(submission_id)
        if sub is None:
            sub = await self.read(protocol.load_submission, submission_id)
            if sub is not None:
                self._submissions.put(submission_id, sub)
        return sub

    def remember(self, sub: protocol.Submission):
        self._submissions.put(sub.id, sub)

    async def publication(self, publication_id: int):
        """The decoded answers, loaded once even when many requests miss the cache
        together (a deadline rush right after a restart)."""
        pub = self._publications.get(publication_id)
        if pub is not None:
            return pub
        pending = self._loading.get(publication_id)
        if pending is None:
            pending = asyncio.ensure_future(self._load_publication(publication_id))
            self._loading[publication_id] = pending
            pending.add_done_callback(lambda _: self._loading.pop(publication_id, None))
        return await asyncio.shield(pending)  # a waiter that gives up does not cancel the load

    async def _load_publication(self, publication_id: int):
        row = await self.read(protocol.publication_row, publication_id)
        pub = await run_in_threadpool(protocol.decode_publication, row)
        self._publications.put(publication_id, pub)
        return pub


def _bearer(request: Request) -> Optional[str]:
    auth = request.headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


def _text(status: int, text: str, headers=None) -> PlainTextResponse:
    return PlainTextResponse(text.rstrip("\n") + "\n", status_code=status, headers=headers)


def _install_error_handlers(app: FastAPI):
    @app.exception_handler(Refused)
    async def refused(_request, exc: Refused):
        return _text(exc.status, exc.text, exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request, exc: StarletteHTTPException):
        return _text(exc.status_code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def invalid(_request, exc: RequestValidationError):
        first = (exc.errors() or [{}])[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "request"
        return _text(400, f"{where}: {first.get('msg', 'invalid value')}")

    @app.exception_handler(WriterStopped)
    async def stopping(_request, _exc):
        return _text(503, "server is shutting down: retry in a few seconds", {"Retry-After": "5"})

    @app.exception_handler(BodyTooLarge)
    async def too_large(_request, exc: BodyTooLarge):
        return _text(413, str(exc), {"Connection": "close"})

    @app.exception_handler(ClientDisconnect)
    async def gone(_request, _exc):  # e.g. dropped for a body that never finished: nobody reads this
        return _text(400, "the client went away before its request body was complete")

    @app.exception_handler(StorageLost)
    async def storage_lost(_request, exc: StorageLost):
        return _text(503, f"database unavailable: {exc}; nothing was saved, retry later", {"Retry-After": "30"})

    @app.exception_handler(DBAPIError)
    async def database_down(_request, exc: DBAPIError):
        # e.g. disk full, locked too long, a dropped database or table: clients retry
        first = (str(exc.orig).strip().splitlines() or [exc.__class__.__name__])[0]
        log.error("database error: %s", first[:300])
        return _text(503, "database unavailable: retry in a few seconds", {"Retry-After": "5"})

    @app.exception_handler(Exception)
    async def unexpected(_request, exc: Exception):
        log.exception("unexpected error")
        return _text(500, f"internal error ({exc.__class__.__name__}); the server log has details")


def _document(app: FastAPI, paths: dict):
    """Add the hand-routed protocol endpoints to FastAPI's generated OpenAPI document."""
    generate = app.openapi

    def openapi():
        if app.openapi_schema is None:  # FastAPI caches the generated document there
            generate().setdefault("paths", {}).update(paths)
        return app.openapi_schema

    app.openapi = openapi


def app_from_environment() -> FastAPI:
    """The app of one of `grader serve --workers N`'s processes (an uvicorn factory)."""
    return create_app(ServerConfig.from_json(os.environ[CONFIG_ENV]))


def create_app(config: Optional[ServerConfig] = None) -> FastAPI:
    """A FastAPI app for `config`; the writer thread runs while the app is served."""
    config = config or ServerConfig()
    redact_logs()
    services = Services(config)

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        # Move the objects of startup (FastAPI, SQLAlchemy, numpy: ~10^5) out of
        # the collector's reach: full collections then stay short instead of
        # pausing every request for tens of ms under load.
        gc.collect()
        gc.freeze()
        sys.setswitchinterval(GIL_SWITCH_SECONDS)
        services.writer.start()
        services.checkpointer.start()
        try:
            yield
        finally:  # on SIGTERM/SIGINT: commit what is queued, then close
            services.writer.stop()
            services.checkpointer.stop()
            services.engine.dispose()

    app = FastAPI(
        title="needle grading server",
        version="1",
        lifespan=lifespan,
        description="mugrade-compatible grading server: /submit, /submit_test, /publish",
    )
    app.state.services = services
    _install_error_handlers(app)
    app.router.routes.extend(api.routes)
    app.include_router(pages.router)
    _document(app, api.OPENAPI_PATHS)
    app.add_middleware(
        BodyLimit,
        max_bytes=config.max_body_bytes,
        by_path={"/login": config.max_form_bytes, "/logout": config.max_form_bytes, "/submit": config.max_form_bytes},
    )  # /submit has no body
    return app
