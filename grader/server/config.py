"""Server settings: one frozen dataclass, filled from the command line or by tests."""
from dataclasses import dataclass

DEFAULT_DB = "sqlite:///grader.db"


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
    # Default tolerances of a problem when the publisher gives none.
    rtol: float = 1e-5
    atol: float = 1e-5
    # Submitted values larger than this are kept as a hash only (the verdict is always kept).
    max_stored_value_bytes: int = 1024 * 1024
    # Group commit: the writer takes at most this many queued writes per transaction.
    max_batch: int = 512
    session_hours: float = 12.0
