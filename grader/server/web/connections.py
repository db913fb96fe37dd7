"""Connection guards under the app: a bound on request heads, header and
body read timeouts, and caps on the connections one client address may hold.

uvicorn waits forever for a request whose headers or body never finish, so
a thousand such connections exhaust the process's file descriptors and every
new client is refused. `GuardedHttp` is uvicorn's httptools protocol with a
timer per request: headers must arrive within `header_timeout` seconds of the
connection (or of the previous response), the body within `body_timeout` of
the headers; otherwise the connection is closed.

A request head is collected here and handed to the parser only once it is
complete: httptools and uvicorn grow a header or URL by concatenation, so a
head fed in many small pieces costs time growing with the square of its
size (a 40 MB header froze the server for seconds). A head over
`max_header_bytes` or with more than `max_headers` lines is answered 431
and the connection closed, before any parsing. One address may hold at most
`max_conns_per_client` connections and, of those, `max_heads_per_client`
with a head still arriving. The caps are per process.

Over all addresses, a process holds at most `connection_budget()`
connections: below its open-files limit by a reserve, so that accepting a
connection, the database and the log always find a descriptor. At the
budget, a new connection closes the oldest connection that has not sent a
complete request yet (a flood of idle connections from many addresses, each
within its cap, only ever evicts itself), so `/healthz` and clients that
are using the server keep working; when every open connection has sent a
request, the new one is refused.
"""

import collections
import functools
import ipaddress
import os
import resource

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from grader.server.config import CONFIG_ENV, ServerConfig

HEAD_END = b"\r\n\r\n"


@functools.lru_cache(maxsize=1)
def settings() -> ServerConfig:
    text = os.environ.get(CONFIG_ENV)
    return ServerConfig.from_json(text) if text else ServerConfig()


def head_too_large(limit_bytes: int, limit_lines: int) -> bytes:
    """The whole 431 answer, sent before closing."""
    text = (
        f"request head too large: at most {limit_bytes} bytes and {limit_lines} header lines; "
        "send the key in the query string or an Authorization header, nothing bigger\n"
    ).encode()
    return (
        b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"content-length: " + str(len(text)).encode() + b"\r\nconnection: close\r\n\r\n" + text
    )


def connection_budget(open_files: int, configured: int, reserve: int) -> int:
    """The connections a process may hold: `configured` (0: no cap of its own), never within
    `reserve` descriptors (or half, under a small limit) of `open_files` (the soft limit;
    RLIM_INFINITY: none), at least 1."""
    room = None if open_files == resource.RLIM_INFINITY else open_files - min(reserve, open_files // 2)
    caps = [c for c in (configured or None, room) if c is not None]
    return max(1, min(caps)) if caps else 1 << 30


@functools.lru_cache(maxsize=1)
def budget() -> int:
    """This process's connection budget (its open-files limit is set before it serves)."""
    cfg = settings()
    return connection_budget(resource.getrlimit(resource.RLIMIT_NOFILE)[0], cfg.max_connections, cfg.connection_reserve)


PEER = "grader.peer"  # in a request's scope["extensions"]: the connection's own address


def from_trusted_proxy(scope, trusted: str) -> bool:
    """The request came over a connection from one of `trusted` (ServerConfig.trusted_proxies)."""
    peer = scope.get("extensions", {}).get(PEER)
    if not peer or not trusted:
        return False
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(net.strip(), strict=False) for net in trusted.split(",") if net.strip())


class GuardedHttp(HttpToolsProtocol):
    open_by_address = collections.Counter()  # client address -> open connections in this process
    heads_by_address = collections.Counter()  # client address -> connections with a head arriving
    counted = set()  # every connection this process holds (within budget())
    untried = collections.OrderedDict()  # those that have sent no complete request yet, oldest first

    def connection_made(self, transport):
        super().connection_made(transport)
        self._address = self.client[0] if self.client else None
        self._timer, self._head, self._head_lines, self._in_head = None, bytearray(), 0, True
        self._head_counted = False  # counted in heads_by_address
        if self._address is not None and self.open_by_address[self._address] >= settings().max_conns_per_client:
            self._address = None  # not counted, so connection_lost must not uncount it
            transport.abort()
            return
        if not self._make_room():
            self._address = None
            transport.abort()
            return
        self.counted.add(self)
        self.untried[self] = None
        if self._address is not None:
            self.open_by_address[self._address] += 1
        self._arm(settings().header_timeout)

    def _make_room(self) -> bool:
        """Whether this connection fits the budget, closing the oldest untried one if need be."""
        if len(self.counted) < budget():
            return True
        if not self.untried:
            return False
        oldest, _ = self.untried.popitem(last=False)
        oldest._forget()  # its descriptor is freed on the loop's next turn; counted no longer
        oldest.transport.abort()
        return True

    def _forget(self):
        self.counted.discard(self)
        self.untried.pop(self, None)

    def connection_lost(self, exc):
        self._forget()
        self._disarm()
        self._head_done()
        if self._address is not None:
            _uncount(self.open_by_address, self._address)
            self._address = None
        super().connection_lost(exc)

    def data_received(self, data: bytes):
        if self.transport.is_closing():  # refused or timed out: whatever else arrives is dropped
            return
        if not self._in_head:
            return super().data_received(data)
        self._unset_keepalive_if_required()  # as uvicorn does on any data: the head timer takes over
        if not self._head and self._timer is None:  # a keep-alive connection starts its next request
            self._arm(settings().header_timeout)
        start = max(0, len(self._head) - len(HEAD_END) + 1)  # the end may straddle two packets
        self._head += data
        end = self._head.find(HEAD_END, start)
        size = len(self._head) if end < 0 else end + len(HEAD_END)
        if end < 0:
            self._head_lines += data.count(b"\n")
        else:  # the bytes after the head's end are its body, or the next request
            self._head_lines = self._head.count(b"\n", 0, size)
        cfg = settings()
        if size > cfg.max_header_bytes or self._head_lines > cfg.max_headers + 2:  # + request line, blank line
            self._refuse_head(cfg)
        elif end >= 0:
            whole, self._head, self._head_lines = bytes(self._head), bytearray(), 0
            self._in_head = False  # until this message completes: the rest is its body
            self._head_done()
            super().data_received(whole)  # one parse of the whole head: linear in its size
        elif not self._head_counted:
            self._count_head()

    def _count_head(self):
        """A head left incomplete by its first packet counts against its address until it ends;
        over the address's cap, the connection is closed."""
        if self._address is None:
            return
        if self.heads_by_address[self._address] >= settings().max_heads_per_client:
            self._head, self._in_head = bytearray(), False
            self.transport.close()
            return
        self.heads_by_address[self._address] += 1
        self._head_counted = True

    def _head_done(self):
        if getattr(self, "_head_counted", False):
            _uncount(self.heads_by_address, self._address)
            self._head_counted = False

    def _refuse_head(self, cfg: ServerConfig):
        self._head, self._in_head = bytearray(), False
        self._head_done()
        if not self.transport.is_closing():
            self.transport.write(head_too_large(cfg.max_header_bytes, cfg.max_headers))
            self.transport.close()

    def on_headers_complete(self):
        self._arm(settings().body_timeout)
        # The address this connection really comes from, which the proxy-headers
        # middleware does not rewrite: only a declared proxy's X-Forwarded-Host counts.
        self.scope.setdefault("extensions", {})[PEER] = self.client[0] if self.client else None
        super().on_headers_complete()

    def on_message_complete(self):
        self._disarm()
        self.untried.pop(self, None)  # a client using the server: never evicted for a newcomer
        self._in_head = True  # the next bytes begin the next request
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


def _uncount(counter: collections.Counter, address):
    counter[address] -= 1
    if counter[address] <= 0:
        del counter[address]
