"""Connection guards under the app: header and body read timeouts, and a cap
on the connections one client address may hold.

uvicorn waits forever for a request whose headers or body never finish, so
a thousand such connections exhaust the process's file descriptors and every
new client is refused. `GuardedHttp` is uvicorn's httptools protocol with a
timer per request: headers must arrive within `header_timeout` seconds of the
connection (or of the previous response), the body within `body_timeout` of
the headers; otherwise the connection is closed. The cap is per process.
"""
import collections
import functools
import os

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from grader.server.config import CONFIG_ENV, ServerConfig


@functools.lru_cache(maxsize=1)
def settings() -> ServerConfig:
    text = os.environ.get(CONFIG_ENV)
    return ServerConfig.from_json(text) if text else ServerConfig()


class GuardedHttp(HttpToolsProtocol):
    open_by_address = collections.Counter()  # client address -> open connections in this process

    def connection_made(self, transport):
        super().connection_made(transport)
        self._address = self.client[0] if self.client else None
        self._timer = None
        if self._address is not None:
            if self.open_by_address[self._address] >= settings().max_conns_per_client:
                self._address = None  # not counted, so connection_lost must not uncount it
                transport.abort()
                return
            self.open_by_address[self._address] += 1
        self._arm(settings().header_timeout)

    def connection_lost(self, exc):
        self._disarm()
        if self._address is not None:
            self.open_by_address[self._address] -= 1
            if self.open_by_address[self._address] <= 0:
                del self.open_by_address[self._address]
            self._address = None
        super().connection_lost(exc)

    def on_message_begin(self):
        super().on_message_begin()
        if self._timer is None:  # a keep-alive connection starts its next request
            self._arm(settings().header_timeout)

    def on_headers_complete(self):
        self._arm(settings().body_timeout)
        super().on_headers_complete()

    def on_message_complete(self):
        self._disarm()
        super().on_message_complete()

    def _arm(self, seconds: float):
        self._disarm()
        self._timer = self.loop.call_later(seconds, self._expire)

    def _disarm(self):
        if getattr(self, "_timer", None) is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self):
        self._timer = None
        if not self.transport.is_closing():
            self.transport.close()
