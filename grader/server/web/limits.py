"""Request limits: body size (an ASGI middleware, bounded reads) and a per-key
rate limit shared by every server process through the database."""

import collections
import math
import threading
import time

from sqlalchemy import case, insert, literal, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from starlette.concurrency import run_in_threadpool

from grader.server.store.db import rate_buckets


class BodyTooLarge(Exception):
    """A request body went over its limit (HTTP 413)."""

    def __init__(self, limit: int, what: str = "request body", why: str = ""):
        super().__init__(f"{what} too large: the limit is {limit} bytes{why}")
        self.limit = limit


class BodyLimit:
    """Refuse bodies over `max_bytes` with 413, without buffering them here.

    A declared Content-Length over the limit is refused at once. Otherwise the
    body is counted as the app reads it (a lying or missing Content-Length
    does not help), so routes check the key first and read the body only
    afterwards: nobody without a key can make the server hold a body.
    """

    def __init__(self, app, max_bytes: int, by_path: dict = None):
        self.app, self.max_bytes, self.by_path = app, max_bytes, by_path or {}

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self.by_path.get(scope["path"], self.max_bytes)  # e.g. the sign-in form: a few KB
        declared = content_length(scope)
        if declared is not None and declared > limit:
            return await too_large(send, limit)  # here, before any routing: the cheapest refusal
        size = 0

        async def counted():
            nonlocal size
            message = await receive()
            size += len(message.get("body", b""))
            if size > limit:
                raise BodyTooLarge(limit)
            return message

        await self.app(scope, counted, send)


async def too_large(send, limit: int):
    text = f"request body too large: the limit is {limit} bytes\n".encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(text)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": text})


async def read_body(request, limit: int, what: str = "request body", why: str = "") -> bytes:
    """The request body, refused with BodyTooLarge as soon as it passes `limit` bytes
    (at once, unread, when its Content-Length says so)."""
    declared = content_length(request.scope)
    if declared is not None and declared > limit:
        raise BodyTooLarge(limit, what, why)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(limit, what, why)
        chunks.append(chunk)
    return b"".join(chunks)


def content_length(scope):
    """The request's declared body size, or None (absent, or not a count of bytes)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


class SharedRateLimiter:
    """Token bucket per key (`rate` tokens a second up to `burst`), kept in the
    database so that it holds across server processes and machines.

    A process takes tokens from the database bucket a few at a time (a lease)
    and spends them locally, so the database sees one small write per lease,
    not one per request. A token is spent at most once, so over any stretch
    of time a key gets at most its rate plus its burst, plus the tokens that
    processes leased earlier and hold unspent (at most `lease` each). Tokens
    leased by a process the key stops using wait there for its next request.
    """

    def __init__(self, engine: Engine, rate: float, burst: int, guard=None):
        self.engine, self.rate, self.burst, self.guard = engine, rate, burst, guard
        self.lease = max(1, min(32, burst // 8))
        self._local = {}  # user id -> leased tokens not yet spent
        self._lock = threading.Lock()

    async def retry_after(self, user_id: int) -> int:
        """0 when the request may go ahead (a token is spent), else seconds to wait."""
        if self.rate <= 0:
            return 0
        with self._lock:
            if self._local.get(user_id, 0) > 0:
                self._local[user_id] -= 1
                return 0
        granted, wait = await run_in_threadpool(self._take, user_id)
        if granted:
            with self._lock:
                self._local[user_id] = self._local.get(user_id, 0) + granted - 1
        return wait

    def _take(self, user_id: int):
        """(tokens granted, seconds to wait) from the database bucket."""
        if self.guard is not None:
            self.guard.check()
        try:
            return self._take_from_db(user_id, time.time())
        except IntegrityError:  # another process made the bucket first: let this request go
            return 0, 0

    def _take_from_db(self, user_id: int, t: float):
        # `t` was read before waiting for the row: another process may have written a later
        # time meanwhile (or run on a clock ahead). Time never runs backwards for a bucket.
        later = literal(t) > rate_buckets.c.updated
        refill = rate_buckets.c.tokens + case((later, literal(t) - rate_buckets.c.updated), else_=0.0) * self.rate
        avail = case((refill > self.burst, literal(float(self.burst))), else_=refill)
        updated = case((later, literal(t)), else_=rate_buckets.c.updated)
        # Each statement commits alone (autocommit): a bucket row is locked only while the
        # database runs one UPDATE, never while this thread waits for the GIL between statements,
        # so processes sharing a key do not queue behind each other.
        with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            for want in dict.fromkeys((self.lease, 1)):
                done = conn.execute(
                    update(rate_buckets)
                    .where(rate_buckets.c.user_id == user_id, avail >= want)
                    .values(tokens=avail - want, updated=updated)
                )
                if done.rowcount:
                    return want, 0
            row = conn.execute(
                select(rate_buckets.c.tokens, rate_buckets.c.updated).where(rate_buckets.c.user_id == user_id)
            ).first()
            if row is None:
                want = min(self.lease, self.burst)
                conn.execute(insert(rate_buckets).values(user_id=user_id, tokens=self.burst - want, updated=t))
                return want, 0
        tokens = min(self.burst, row.tokens + max(0.0, t - row.updated) * self.rate)
        return 0, max(1, math.ceil((1 - tokens) / self.rate))


class LocalRateLimiter:
    """Token bucket per name (`rate` tokens a second up to `burst`) in this process only:
    for sign-ins per client address, before any key is known, for page loads per user,
    and for the bytes of answers per key (a request's cost: its body's size).

    At most `max_names` buckets are kept; the least recently used goes first
    (a name forgotten starts with a full bucket).
    """

    def __init__(self, rate: float, burst: int, max_names: int = 65536):
        self.rate, self.burst, self.max_names = rate, float(burst), max_names
        self._buckets = collections.OrderedDict()  # name -> (tokens, time)

    def retry_after(self, name, cost: float = 1) -> int:
        """0 when the request may go ahead (`cost` tokens are spent), else
        seconds to wait. A cost above the burst counts as the burst, so that
        it can pass once the bucket is full."""
        if self.rate <= 0:
            return 0
        cost = min(cost, self.burst)
        t = time.monotonic()
        tokens, then = self._buckets.pop(name, (self.burst, t))
        tokens = min(self.burst, tokens + (t - then) * self.rate)
        self._buckets[name] = (tokens - cost, t) if tokens >= cost else (tokens, t)
        if len(self._buckets) > self.max_names:
            self._buckets.popitem(last=False)
        return 0 if tokens >= cost else max(1, math.ceil((cost - tokens) / self.rate))
