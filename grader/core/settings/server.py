"""The grading server's settings: SERVER, one per field of
grader.server.config.ServerConfig in its order (its defaults come from here),
and SERVE, the options of `grader serve` that are not the server's
configuration (where it listens, how many processes, TLS)."""

import ipaddress

from .setting import Setting

KB, MB = 1024, 2**20


def _network(text: str):
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return "not an IP address or network; give the reverse proxy's address, e.g. 127.0.0.1 or 10.0.0.0/8"
    return None


# Checked by SQLAlchemy when it is used (grader.server.commands: one line, exit 2).
DB_URL = Setting("db_url", str, "sqlite:///grader.db", "SQLAlchemy database URL", flag="--db")
RATE = Setting(
    "rate_per_second",
    float,
    10.0,
    "requests per second allowed per key, 0 for no limit",
    unit="requests/s",
    flag="--rate",
    at_least=0,
    advice="(0 turns the limit off)",
)
BURST = Setting(
    "rate_burst",
    int,
    200,
    "requests a key may send at once before --rate applies (a whole problem's cases)",
    flag="--burst",
    at_least=1,
)
MAX_BODY = Setting(
    "max_body_bytes",
    int,
    8 * MB,
    "largest request body in bytes (refused before it is parsed)",
    unit="bytes",
    flag="--max-body",
    at_least=1024,
)
MAX_ARRAY = Setting(
    "max_array_elements", int, 2_000_000, "most array elements in one submitted value", flag="--max-array", at_least=1
)
ANSWER_KBPS = Setting(
    "answer_bytes_per_second",
    float,
    256.0,
    "answer KB one key may send per second and "
    "process, after its burst (0: no limit); beyond it 429 with Retry-After, which the "
    "client waits out",
    unit="KB/s",
    flag="--answer-kbps",
    scale=KB,
    at_least=0,
    advice="(0: no limit)",
)
ANSWER_BURST = Setting(
    "answer_bytes_burst",
    float,
    4.0,
    "answer MB one key may send at once before --answer-kbps applies",
    unit="MB",
    flag="--answer-burst-mb",
    scale=MB,
    field_type=int,
    positive=True,
)
QUOTA = Setting(
    "quota_bytes",
    float,
    64.0,
    "storage one student key may use (submissions and kept values), in MB (0 for no quota)",
    unit="MB",
    flag="--quota-mb",
    scale=MB,
    field_type=int,
    at_least=0,
    advice="(0: no quota)",
)
HEADER_TIMEOUT = Setting(
    "header_timeout",
    float,
    10.0,
    "seconds a client has to send a request's headers",
    unit="s",
    flag="--header-timeout",
    positive=True,
)
BODY_TIMEOUT = Setting(
    "body_timeout",
    float,
    30.0,
    "seconds a client has to send a request's body",
    unit="s",
    flag="--body-timeout",
    positive=True,
)
CONNS_PER_CLIENT = Setting(
    "max_conns_per_client",
    int,
    256,
    "open connections one client address may hold per process",
    flag="--max-conns-per-client",
    at_least=1,
)
CONNECTION_RESERVE = Setting(
    "connection_reserve",
    int,
    512,
    "file descriptors kept for the database, logs and "
    "connections accepted before the budget sees them, when max_connections is 0",
    at_least=0,
)
MAX_CONNECTIONS = Setting(
    "max_connections",
    int,
    0,
    "connections one server process holds at most (0: its "
    f"open-files limit less {CONNECTION_RESERVE.default}); beyond it the oldest that sent no "
    "request yet is closed",
    flag="--max-connections",
    at_least=0,
    advice="(0: from the open-files limit)",
)
TRUSTED_PROXIES = Setting(
    "trusted_proxies",
    str,
    None,
    "a reverse proxy's address or network (repeatable) "
    "whose X-Forwarded-For, X-Forwarded-Proto and X-Forwarded-Host are believed; without it they are "
    "ignored, so a client cannot pick the address its sign-ins are counted against",
    flag="--trusted-proxy",
    repeat=True,
    metavar="ADDR",
    valid=_network,
    shown="none",
)

# Every ServerConfig field, in its order; those without a flag are set by tests or a ServerConfig made in code.
SERVER = (
    DB_URL,
    MAX_BODY,
    Setting("max_json_depth", int, 32, "deepest nesting of a JSON request body", at_least=1),
    MAX_ARRAY,
    Setting(
        "answer_bytes_factor",
        float,
        4.0,
        "an answer to one case may be at most this many times the size "
        "of the published answer's encoding (checked on Content-Length, before decoding)",
        positive=True,
    ),
    Setting(
        "min_answer_bytes",
        int,
        64 * KB,
        "the answer size limit is never below this (nor above max_body_bytes)",
        unit="bytes",
        at_least=0,
    ),
    RATE,
    BURST,
    Setting(
        "max_stored_value_bytes",
        int,
        MB,
        "submitted values larger than this are kept as a hash only (the verdict is always kept)",
        unit="bytes",
        at_least=0,
    ),
    Setting(
        "max_batch", int, 512, "queued writes the writer takes into one transaction at most (group commit)", at_least=1
    ),
    Setting("session_hours", float, 12.0, "how long a sign-in lasts", unit="h", positive=True),
    Setting(
        "login_per_minute",
        int,
        10,
        "sign-ins per key and minute, shared by every process (a burst of as many)",
        at_least=1,
    ),
    Setting(
        "login_per_minute_per_address",
        int,
        120,
        "sign-ins per client address and minute, per process (a class behind one NAT address signs in together)",
        at_least=1,
    ),
    Setting("max_sessions_per_key", int, 10, "live sessions per key; signing in once more ends the oldest", at_least=1),
    Setting(
        "pages_per_second",
        float,
        2.0,
        "page loads (/me, the gradebook's pages) per session and process",
        unit="pages/s",
        positive=True,
    ),
    Setting("pages_burst", int, 6, "page loads a session may make at once before pages_per_second applies", at_least=1),
    Setting(
        "page_cache_entries",
        int,
        256,
        "rendered results pages kept per process (least recently used "
        "dropped first; reused only while nothing shown has changed)",
        at_least=0,
    ),
    ANSWER_KBPS,
    ANSWER_BURST,
    QUOTA,
    HEADER_TIMEOUT,
    BODY_TIMEOUT,
    CONNS_PER_CLIENT,
    Setting(
        "max_heads_per_client",
        int,
        32,
        "connections of one client address per process with a request head still arriving",
        at_least=1,
    ),
    MAX_CONNECTIONS,
    CONNECTION_RESERVE,
    Setting(
        "listen_backlog",
        int,
        128,
        "connections the kernel queues before the server accepts them (asyncio accepts up to this many at once)",
        at_least=1,
    ),
    Setting(
        "max_header_bytes",
        int,
        64 * KB,
        "largest request head (request line and headers); larger: 431",
        unit="bytes",
        at_least=1024,
    ),
    Setting("max_headers", int, 100, "most header lines in a request; more: 431", at_least=1),
    Setting("max_form_bytes", int, 4096, "largest sign-in form (a key and little else)", unit="bytes", at_least=256),
    TRUSTED_PROXIES,
)

# `grader serve`'s own options: how it runs, not what the server allows.
HOST = Setting("host", str, "127.0.0.1", "address to listen on", flag="--host")
PORT = Setting("port", int, 8000, "port to listen on", flag="--port", at_least=1, at_most=65535)
WORKERS = Setting(
    "workers", int, 1, "server processes; more than 1 is meant for PostgreSQL", flag="--workers", at_least=1, at_most=64
)
ACCESS_LOG = Setting("access_log", bool, False, "log every request (keys are redacted)", flag="--access-log")
SSL_KEYFILE = Setting("ssl_keyfile", str, None, "serve HTTPS with this key (and --ssl-certfile)", flag="--ssl-keyfile")
SSL_CERTFILE = Setting("ssl_certfile", str, None, "the certificate for --ssl-keyfile", flag="--ssl-certfile")
SERVE = (HOST, PORT, WORKERS, ACCESS_LOG, SSL_KEYFILE, SSL_CERTFILE)

# The order `grader serve` declares its flags in (and checks them in).
SERVE_FLAGS = (
    DB_URL,
    HOST,
    PORT,
    RATE,
    BURST,
    MAX_BODY,
    MAX_ARRAY,
    ANSWER_KBPS,
    ANSWER_BURST,
    QUOTA,
    WORKERS,
    HEADER_TIMEOUT,
    BODY_TIMEOUT,
    CONNS_PER_CLIENT,
    TRUSTED_PROXIES,
    MAX_CONNECTIONS,
    ACCESS_LOG,
    SSL_KEYFILE,
    SSL_CERTFILE,
)
