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


def _newest_server_bin() -> Path:
    """Debian's newest installed server binaries (/usr/lib/postgresql/N/bin)."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0
    )
    return found[-1].parent if found else Path("/usr/lib/postgresql/15/bin")


PG_BIN = _newest_server_bin()
# runuser lives in /usr/sbin, which a plain user's PATH (or `env -i PATH=/usr/bin:/bin`) may lack
RUNUSER = shutil.which("runuser") or shutil.which("runuser", path="/usr/sbin:/sbin")


def missing():
    """Why a cluster cannot start here, and the command that fixes it; else None."""
    if not (PG_BIN / "initdb").exists():
        return (
            "PostgreSQL's server binaries are not installed: run `make system-deps` "
            "(or `apt-get install -y postgresql`)"
        )
    if RUNUSER is None:
        return "runuser is not installed: run `apt-get install -y util-linux`"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed: run `.venv/bin/pip install -e '.[server,dev]'`"
    return None


def _as_postgres(*cmd, timeout=60):
    return subprocess.run(
        [RUNUSER, "-u", "postgres", "--", *cmd], capture_output=True, text=True, timeout=timeout, check=True
    )


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
        _as_postgres(
            str(PG_BIN / "pg_ctl"),
            "-D",
            str(self.folder / "data"),
            "-l",
            str(self.folder / "log"),
            "-w",
            "-o",
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300",
            "start",
        )
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
