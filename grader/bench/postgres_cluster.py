"""A throwaway PostgreSQL cluster from Debian's packages (`postgresql`), for
the server benchmark and tests: `initdb` and `pg_ctl` run as the `postgres`
user in a temporary folder, on a free loopback port, with fsync off (only
throwaway data lives there). About a second to start.
"""
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def missing():
    """Why a cluster cannot start here, else None."""
    if not (PG_BIN / "initdb").exists() or not shutil.which("runuser"):
        return "PostgreSQL 15 server binaries are not installed (Debian package postgresql)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[server]')"
    return None


def _as_postgres(*cmd, timeout=60):
    return subprocess.run(["runuser", "-u", "postgres", "--", *cmd], capture_output=True, text=True,
                          timeout=timeout, check=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self):
        self.folder, self.port, self._names = None, None, 0

    def start(self) -> "Cluster":
        self.folder = Path(tempfile.mkdtemp(prefix="grader-pg-"))
        shutil.chown(self.folder, "postgres", "postgres")
        self.port = _free_port()
        _as_postgres(str(PG_BIN / "initdb"), "-D", str(self.folder / "data"), "-U", "postgres", "--auth", "trust")
        _as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.folder / "data"), "-l", str(self.folder / "log"),
                     "-w", "-o", f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
                     "-c max_connections=300", "start")
        return self

    def new_database(self) -> str:
        """The SQLAlchemy URL of a new, empty database."""
        self._names += 1
        name = f"grader{self._names}"
        _as_postgres(str(PG_BIN / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), name)
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self):
        if self.folder is not None:
            _as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "immediate", "stop")
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *_):
        self.stop()
