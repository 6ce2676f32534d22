"""The embedded default: a private PostgreSQL cluster under a cache folder.

``initdb`` and ``postgres`` refuse to run as root, so when we are root the cluster
belongs to the ``postgres`` user and lives where that user can reach it (not /root).

Nobody else on the machine gets in: every connection authenticates with SCRAM (passwords
generated here, kept in a 0600 passfile in the 0700 home, see ``credentials``), the socket
directory is 0700, and the server listens on 127.0.0.1 only. Candidates run as the
unprivileged ``siselect_runner`` (see ``runner_role``); the superuser ``postgres`` loads
and administers. A cluster made before this (``-A trust``) is secured at its next start.
"""

import contextlib
import fcntl
import glob
import os
import pwd
import shlex
import shutil
import socket
import subprocess
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from siselect.client import credentials
from siselect.client.runner_role import RUNNER
from siselect.runtime.errors import ConfigError

DATABASE = "siselect"
SUPERUSER = "postgres"


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

    @property
    def passfile(self) -> Path:
        return self.home / "pgpass"

    @property
    def socket_dir(self) -> Path:
        return self.home / "socket"

    def _owner(self) -> tuple[int, int] | None:
        """(uid, gid) files must be given to, or None when we are that user."""
        if os.geteuid() != 0:
            return None
        owner = pwd.getpwnam("postgres")
        return owner.pw_uid, owner.pw_gid

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

    def dsn(self, database: str = DATABASE, user: str = SUPERUSER) -> str:
        """A DSN that names the passfile instead of carrying the password."""
        passfile = urllib.parse.quote(str(self.passfile), safe="/")
        return f"postgresql://{user}@127.0.0.1:{self.port()}/{database}?passfile={passfile}"

    def runner_dsn(self, database: str = DATABASE) -> str:
        """Where candidates run: as the unprivileged runner role."""
        return self.dsn(database, RUNNER)

    def running(self) -> bool:
        if not (self.datadir / "PG_VERSION").exists():
            return False
        return self._pg("pg_ctl", "status", "-D", str(self.datadir)).returncode == 0

    def _prepare_home(self) -> None:
        """The home and the socket directory: 0700, the cluster owner's."""
        owner = self._owner()
        for folder in (self.home, self.socket_dir):
            folder.mkdir(parents=True, exist_ok=True)
            if owner is not None:
                os.chown(folder, *owner)
            folder.chmod(0o700)

    def init(self) -> None:
        self._prepare_home()
        # No connection is accepted until secure() has set the passwords and pg_hba.conf.
        result = self._pg(
            "initdb",
            "-D",
            str(self.datadir),
            "-U",
            SUPERUSER,
            "-A",
            "reject",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-instructions",
        )
        if result.returncode != 0:
            raise ConfigError(f"initdb failed: {result.stderr.strip().splitlines()[-1:]}")

    def secured(self) -> bool:
        """Whether the stopped or running cluster authenticates as :meth:`secure` sets up."""
        try:
            hba = (self.datadir / "pg_hba.conf").read_text()
            mode = self.passfile.stat().st_mode & 0o777
        except OSError:
            return False
        known = credentials.read_passfile(self.passfile)
        return hba == credentials.HBA and mode == 0o600 and {SUPERUSER, RUNNER} <= known.keys()

    def secure(self) -> None:
        """On the stopped cluster: passwords for the superuser and the runner role (created
        here), the passfile, and pg_hba.conf with SCRAM everywhere. Single-user mode, so no
        connection is possible while the cluster is still open."""
        self._prepare_home()
        passwords = credentials.read_passfile(self.passfile)
        for user in (SUPERUSER, RUNNER):
            passwords.setdefault(user, credentials.generate())
        credentials.write_passfile(self.passfile, passwords, self._owner())
        superuser = credentials.scram_verifier(passwords[SUPERUSER])
        runner = credentials.scram_verifier(passwords[RUNNER])
        script = "\n".join([  # one statement a line: single-user mode's terminator
            f"ALTER ROLE {SUPERUSER} PASSWORD '{superuser}'",
            f"DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = "
            f"'{RUNNER}') THEN CREATE ROLE {RUNNER}; END IF; END$$",
            f"ALTER ROLE {RUNNER} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION "
            f"NOBYPASSRLS PASSWORD '{runner}'",
        ]) + "\n"
        result = self._pg("postgres", "--single", "-D", str(self.datadir), "postgres",
                          input=script)
        if result.returncode != 0 or "ERROR:" in result.stdout + result.stderr:
            raise ConfigError("could not set the cluster's passwords: "
                              + (result.stderr.strip() or result.stdout.strip())[-300:])
        hba = self.datadir / "pg_hba.conf"
        hba.write_text(credentials.HBA)
        owner = self._owner()
        if owner is not None:
            os.chown(hba, *owner)
        hba.chmod(0o600)

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Held while one process starts the cluster or prepares a database: another waits
        for it, then finds the work done, where two initdb, pg_ctl or CREATE DATABASE runs
        would fight over one data folder or name."""
        self._prepare_home()
        with open(self.home / "start.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def start(self) -> bool:
        """Start the cluster unless it runs; True when this call started it."""
        if self.running():
            if self.secured():
                return False
            self.stop()  # made before passwords: nobody may use it as it is
        if not (self.datadir / "PG_VERSION").exists():
            self.init()
        if not self.secured():
            self.secure()
        self._prepare_home()
        port = _free_port()
        options = (
            f"-p {port} -c listen_addresses=127.0.0.1 -k {self.socket_dir} "
            "-c unix_socket_permissions=0700 -c password_encryption=scram-sha-256 "
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


def provsql_library() -> Path | None:
    """ProvSQL's server library where it is installed for these binaries, else None."""
    pg_config = pg_bindir() / "pg_config"
    if not pg_config.exists():
        return None
    found = subprocess.run([str(pg_config), "--pkglibdir"], capture_output=True, text=True)
    library = Path(found.stdout.strip()) / "provsql.so"
    return library if found.returncode == 0 and library.exists() else None


def cluster(provsql: bool | None = None) -> Cluster:
    """The embedded cluster. It preloads ProvSQL where ProvSQL is installed (``provsql``
    None), so that ``backend => 'auto'`` finds it without configuration; True requires it,
    False leaves it out. The setting applies when the cluster starts."""
    if provsql is None:
        provsql = provsql_library() is not None
    elif provsql and provsql_library() is None:
        raise ConfigError("ProvSQL is not installed for this PostgreSQL (no provsql.so in "
                          "pg_config --pkglibdir): build and install it, or drop --provsql")
    return Cluster(_home(), {"shared_preload_libraries": "provsql"} if provsql else {})


def ready(cluster_: Cluster, database: str = DATABASE) -> tuple[bool, str]:
    """Start the cluster unless it runs and prepare ``database`` (:func:`ensure_database`),
    one process at a time (:meth:`Cluster.exclusive`): whether this call started the
    cluster, and the database's superuser DSN."""
    with cluster_.exclusive():
        started = cluster_.start()
        return started, ensure_database(cluster_, database)


def ensure_database(cluster_: Cluster, database: str = DATABASE) -> str:
    """Create ``database`` with the extension installed and the runner role's grants;
    return its superuser DSN (``cluster_.runner_dsn(database)`` is the runner's)."""
    import psycopg

    from siselect.client.runner_role import prepare
    from siselect.runtime.executor import quote_ident

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
        try:
            conn.execute("SELECT siselect.version()")
        except psycopg.Error:
            # Objects of this version number from another build (a development tree) whose
            # functions cannot load the installed package: this private cluster's copy is
            # reinstalled rather than left broken.
            conn.execute("DROP EXTENSION siselect CASCADE")
            conn.execute("CREATE EXTENSION siselect CASCADE")
        prepare(conn)
    return cluster_.dsn(database)
