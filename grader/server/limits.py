"""Request limits: body size (an ASGI middleware) and a per-key rate limit."""
import math
import threading
import time


class BodyLimit:
    """Refuse bodies over `max_bytes` with 413 before the app parses them.

    The body is read here (counting as it arrives, so a lying or missing
    Content-Length does not help) and replayed to the app.
    """

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            return await self._too_large(send)
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return await self._too_large(send)
            chunks.append(chunk)
            more = message.get("more_body", False)
        body, sent = b"".join(chunks), False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()  # after the body: wait for a disconnect
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _too_large(self, send):
        text = f"request body too large: the limit is {self.max_bytes} bytes\n".encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(text)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": text})


def _content_length(scope):
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class RateLimiter:
    """Token bucket per key: `rate` tokens per second up to `burst`.

    In memory, per server process: with several processes each enforces its own bucket.
    """

    def __init__(self, rate: float, burst: int):
        self.rate, self.burst = rate, burst
        self._buckets = {}
        self._lock = threading.Lock()

    def retry_after(self, key) -> int:
        """0 when the request may go ahead (a token is taken), else seconds to wait."""
        if self.rate <= 0:
            return 0
        t = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(key, (self.burst, t))
            tokens = min(self.burst, tokens + (t - last) * self.rate)
            if tokens >= 1:
                self._buckets[key] = (tokens - 1, t)
                return 0
            self._buckets[key] = (tokens, t)
        return max(1, math.ceil((1 - tokens) / self.rate))
