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
    # Token bucket per key: `rate_per_second` refill, `rate_burst` capacity; 0 disables.
    # The burst lets a student send a whole problem's cases at once.
    rate_per_second: float = 10.0
    rate_burst: int = 200
    # Submitted values larger than this are kept as a hash only (the verdict is always kept).
    max_stored_value_bytes: int = 1024 * 1024
    # Group commit: the writer takes at most this many queued writes per transaction.
    max_batch: int = 512
    session_hours: float = 12.0
    # Bytes one student key may store (submissions and kept values); 0 for no quota.
    quota_bytes: int = 64 * 1024 * 1024
    # Connections: a request's headers must arrive within header_timeout seconds
    # and its body within body_timeout; one client address holds at most
    # max_conns_per_client connections per server process.
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    max_conns_per_client: int = 256
    # The sign-in form is a key and little else.
    max_form_bytes: int = 4096

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "ServerConfig":
        return cls(**json.loads(text))
