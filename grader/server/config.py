"""Server settings: one frozen dataclass, filled from the command line or by tests.

Every field is declared once, with its default, unit, check and what it does,
in grader/core/settings/server.py (SERVER, in this order; docs/reference/
settings.md lists them): the defaults below come from there, `grader serve`'s
flags are generated from there, and a test holds the names and types equal."""

import json
from dataclasses import asdict, dataclass

from grader.core.settings import DB_URL, SERVER, defaults

DEFAULT_DB = DB_URL.default
CONFIG_ENV = "GRADER_SERVER_CONFIG"  # how `grader serve` hands its settings to each server process

_D = defaults(SERVER)


@dataclass(frozen=True)
class ServerConfig:
    db_url: str = _D.db_url
    # Request limits: a body over max_body_bytes is refused before it is parsed.
    max_body_bytes: int = _D.max_body_bytes
    max_json_depth: int = _D.max_json_depth
    max_array_elements: int = _D.max_array_elements
    # An answer to one case may be at most answer_bytes_factor times the size of
    # the published answer's encoding (at least min_answer_bytes, at most
    # max_body_bytes): a right answer is never much bigger than the published one,
    # and the check runs on Content-Length, before anything is decoded.
    answer_bytes_factor: float = _D.answer_bytes_factor
    min_answer_bytes: int = _D.min_answer_bytes
    # Token bucket per key: `rate_per_second` refill, `rate_burst` capacity; 0 disables.
    rate_per_second: float = _D.rate_per_second
    rate_burst: int = _D.rate_burst
    max_stored_value_bytes: int = _D.max_stored_value_bytes
    max_batch: int = _D.max_batch
    session_hours: float = _D.session_hours
    # Sign-ins: per key (shared by every process), per client address (per process),
    # and at most max_sessions_per_key live sessions per key.
    login_per_minute: int = _D.login_per_minute
    login_per_minute_per_address: int = _D.login_per_minute_per_address
    max_sessions_per_key: int = _D.max_sessions_per_key
    # Page loads per session and process. Four tabs reloading /me once cost others seconds.
    pages_per_second: float = _D.pages_per_second
    pages_burst: int = _D.pages_burst
    page_cache_entries: int = _D.page_cache_entries
    # Answer bytes one key may send per second and process, then 429 with Retry-After:
    # a key storing 1 MB answers as fast as it can fsyncs megabytes a second and slows
    # everyone's answers. 0 for no limit.
    answer_bytes_per_second: float = _D.answer_bytes_per_second
    answer_bytes_burst: int = _D.answer_bytes_burst
    quota_bytes: int = _D.quota_bytes
    # Connections: a class behind one NAT address sends whole heads in one packet,
    # an attacker holds them open (max_heads_per_client).
    header_timeout: float = _D.header_timeout
    body_timeout: float = _D.body_timeout
    max_conns_per_client: int = _D.max_conns_per_client
    max_heads_per_client: int = _D.max_heads_per_client
    # All connections of a process: at the cap, a new connection closes the oldest one
    # that has not yet sent a complete request; when every one has, the new one is
    # refused (web/connections.py).
    max_connections: int = _D.max_connections
    connection_reserve: int = _D.connection_reserve
    listen_backlog: int = _D.listen_backlog
    max_header_bytes: int = _D.max_header_bytes
    max_headers: int = _D.max_headers
    max_form_bytes: int = _D.max_form_bytes
    # As uvicorn's forwarded_allow_ips; "" believes no one.
    trusted_proxies: str = _D.trusted_proxies

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "ServerConfig":
        return cls(**json.loads(text))
