"""Server settings: one frozen dataclass, filled from the command line or by tests."""
import json
from dataclasses import asdict, dataclass

DEFAULT_DB = "sqlite:///grader.db"
CONFIG_ENV = "GRADER_SERVER_CONFIG"  # how `grader serve` hands its settings to each server process


@dataclass(frozen=True)
class ServerConfig:
    db_url: str = DEFAULT_DB
    # Request limits: a body over max_body_bytes is refused before it is parsed.
    max_body_bytes: int = 8 * 1024 * 1024
    max_json_depth: int = 32
    max_array_elements: int = 2_000_000
    # An answer to one case may be at most answer_bytes_factor times the size of
    # the published answer's encoding (at least min_answer_bytes, at most
    # max_body_bytes): a right answer is never much bigger than the published one,
    # and the check runs on Content-Length, before anything is decoded.
    answer_bytes_factor: float = 4.0
    min_answer_bytes: int = 64 * 1024
    # Token bucket per key: `rate_per_second` refill, `rate_burst` capacity; 0 disables.
    # The burst lets a student send a whole problem's cases at once.
    rate_per_second: float = 10.0
    rate_burst: int = 200
    # Submitted values larger than this are kept as a hash only (the verdict is always kept).
    max_stored_value_bytes: int = 1024 * 1024
    # Group commit: the writer takes at most this many queued writes per transaction.
    max_batch: int = 512
    session_hours: float = 12.0
    # Sign-ins: per key `login_per_minute` (shared by every process; a burst of as many),
    # per client address `login_per_minute_per_address` (per process; a class behind one
    # NAT address signs in together), and at most max_sessions_per_key live sessions
    # per key (signing in once more ends the oldest).
    login_per_minute: int = 10
    login_per_minute_per_address: int = 120
    max_sessions_per_key: int = 10
    # Page loads (/me, the gradebook's pages) per session and process: `pages_per_second`,
    # a burst of `pages_burst`. Four tabs reloading /me once cost others seconds.
    pages_per_second: float = 2.0
    pages_burst: int = 6
    # Rendered results pages kept per process (one per student shown, least recently
    # used dropped first); each is reused only while nothing it shows has changed.
    page_cache_entries: int = 256
    # Answer bytes one key may send per second and process (`answer_bytes_per_second`,
    # a burst of `answer_bytes_burst`, then 429 with Retry-After, which the client
    # waits out): a key storing 1 MB answers as fast as it can, within its quota,
    # fsyncs megabytes a second and slows everyone's answers. 0 for no limit.
    answer_bytes_per_second: float = 256 * 1024
    answer_bytes_burst: int = 4 * 1024 * 1024
    # Bytes one student key may store (submissions and kept values); 0 for no quota.
    quota_bytes: int = 64 * 1024 * 1024
    # Connections: a request's headers must arrive within header_timeout seconds
    # and its body within body_timeout; one client address holds at most
    # max_conns_per_client connections per server process, and of those at most
    # max_heads_per_client with a request head still arriving (a class behind one
    # NAT address sends whole heads in one packet, an attacker holds them open).
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    max_conns_per_client: int = 256
    max_heads_per_client: int = 32
    # All connections of a process: at most max_connections (0: the process's open-files
    # limit less connection_reserve descriptors, kept for the database and logs and for the
    # connections accepted before the budget sees them: asyncio accepts up to listen_backlog
    # at once). At the cap, a new connection closes the oldest one that has not yet sent a
    # complete request; when every one has, the new one is refused (web/connections.py).
    max_connections: int = 0
    connection_reserve: int = 512
    listen_backlog: int = 128
    # A request head (request line and headers) over this many bytes or header lines: 431.
    max_header_bytes: int = 64 * 1024
    max_headers: int = 100
    # The sign-in form is a key and little else.
    max_form_bytes: int = 4096
    # Reverse proxies (addresses or networks, comma-separated) whose X-Forwarded-For and
    # X-Forwarded-Proto are believed, as uvicorn's forwarded_allow_ips; "" believes no one,
    # so a client cannot pick the address its sign-ins are counted against.
    trusted_proxies: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "ServerConfig":
        return cls(**json.loads(text))
