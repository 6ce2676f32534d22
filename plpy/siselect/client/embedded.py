"""The embedded default: a private PostgreSQL cluster under a cache folder.

``initdb`` and ``postgres`` refuse to run as root, so when we are root the cluster
belongs to the ``postgres`` user and lives where that user can reach it (not /root).
"""

import contextlib
import glob
import os
import pwd
import shlex
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError

DATABASE = "siselect"


def _home() -> Path:
    if os.environ.get("SISELECT_HOME"):
        return Path(os.environ["SISELECT_HOME"])
    if os.geteuid() == 0:
        return Path("/var/tmp/siselect")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(cache) / "siselect"


def pg_bindir() -> Path:
    """Where initdb and pg_ctl live: $SISELECT_PG_BINDIR, PATH, or the newest Debian install."""
    if os.environ.get("SISELECT_PG_BINDIR"):
        return Path(os.environ["SISELECT_PG_BINDIR"])
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent  # symlinks in /usr/local/bin point home
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version_key)
    if not candidates:
        raise ConfigError("no PostgreSQL server binaries found (initdb); set SISELECT_PG_BINDIR")
    return Path(candidates[-1]).parent


def _version_key(path: str) -> int:
    part = path.split("/")[4]
    return int(part) if part.isdigit() else 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    home: Path
    # Extra server settings passed as -c NAME=VALUE at start, e.g.
    # {"shared_preload_libraries": "provsql"} for a cluster that serves ProvSQL.
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def datadir(self) -> Path:
        return self.home / "data"

    @property
    def portfile(self) -> Path:
        return self.home / "port"

    @property
    def logfile(self) -> Path:
        return self.home / "postgresql.log"

    def _run_as_owner(self, args: list[str], **kw) -> subprocess.CompletedProcess:
        if os.geteuid() == 0:
            args = ["runuser", "-u", "postgres", "--", *args]
        return subprocess.run(args, capture_output=True, text=True, **kw)

    def _pg(self, tool: str, *args: str, **kw) -> subprocess.CompletedProcess:
        return self._run_as_owner([str(pg_bindir() / tool), *args], **kw)

    def port(self) -> int | None:
        with contextlib.suppress(OSError, ValueError):
            return int(self.portfile.read_text().strip())
        return None

    def dsn(self, database: str = DATABASE) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port()}/{database}"

    def running(self) -> bool:
        if not (self.datadir / "PG_VERSION").exists():
            return False
        return self._pg("pg_ctl", "status", "-D", str(self.datadir)).returncode == 0

    def _prepare_home(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            os.chown(self.home, owner.pw_uid, owner.pw_gid)
            self.home.chmod(0o755)

    def init(self) -> None:
        self._prepare_home()
        result = self._pg(
            "initdb",
            "-D",
            str(self.datadir),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-instructions",
        )
        if result.returncode != 0:
            raise ConfigError(f"initdb failed: {result.stderr.strip().splitlines()[-1:]}")

    def start(self) -> bool:
        """Start the cluster unless it runs; True when this call started it."""
        if self.running():
            return False
        if not (self.datadir / "PG_VERSION").exists():
            self.init()
        port = _free_port()
        options = (
            f"-p {port} -c listen_addresses=127.0.0.1 -k {self.home} "
            "-c max_connections=100 -c shared_buffers=128MB -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off"
        )
        for name, value in self.settings.items():  # pg_ctl hands -o to a shell
            options += f" -c {name}={shlex.quote(value)}"
        result = self._pg(
            "pg_ctl",
            "start",
            "-w",
            "-t",
            "60",
            "-D",
            str(self.datadir),
            "-l",
            str(self.logfile),
            "-o",
            options,
        )
        if result.returncode != 0:
            tail = self.logfile.read_text(errors="replace").splitlines()[-5:]
            raise ConfigError("PostgreSQL did not start: " + " | ".join(tail))
        self.portfile.write_text(f"{port}\n")
        self._wait_ready(port)
        return True

    def _wait_ready(self, port: int) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self._pg("pg_isready", "-h", "127.0.0.1", "-p", str(port)).returncode == 0:
                return
            time.sleep(0.2)
        raise ConfigError("PostgreSQL did not become ready within 30 seconds")

    def stop(self) -> bool:
        if not self.running():
            return False
        self._pg("pg_ctl", "stop", "-w", "-m", "fast", "-D", str(self.datadir))
        return True


def cluster() -> Cluster:
    return Cluster(_home())


def ensure_database(cluster_: Cluster, database: str = DATABASE) -> str:
    """Create ``database`` with the extension installed; return its DSN."""
    import psycopg

    from ..executor import quote_ident

    with psycopg.connect(cluster_.dsn("postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,))
        if exists.fetchone() is None:
            conn.execute(f"CREATE DATABASE {quote_ident(database)}")
    with psycopg.connect(cluster_.dsn(database), autocommit=True) as conn:
        available = conn.execute(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'siselect'"
        ).fetchone()
        if available is None:
            raise ConfigError(
                "the siselect extension is not installed in this PostgreSQL; run `make install`"
            )
        conn.execute("CREATE EXTENSION IF NOT EXISTS siselect CASCADE")
        conn.execute("ALTER EXTENSION siselect UPDATE")
    return cluster_.dsn(database)
