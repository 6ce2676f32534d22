"""Passwords of the embedded cluster: generated once, kept in a libpq passfile, never printed.

The server only ever receives SCRAM verifiers (computed here), so no plaintext password
reaches a statement, a log line or a process argument; the passfile, mode 0600 in the
cluster's home, is the one place it exists. DSNs name the file (``?passfile=``).
"""

import base64
import hashlib
import hmac
import os
import secrets
from pathlib import Path

# Every connection proves a password; nothing is trusted, not even the local socket
# (whose directory is 0700 as a second fence).
HBA = """\
# siselect's private cluster (written by siselect): SCRAM for every connection, no trust.
local   all          all                     scram-sha-256
host    all          all   127.0.0.1/32      scram-sha-256
local   replication  all                     scram-sha-256
host    replication  all   127.0.0.1/32      scram-sha-256
"""

_ITERATIONS = 4096  # PostgreSQL's own default (scram_iterations)


def generate() -> str:
    # URL-safe characters only: nothing a passfile line or a SQL literal would need to escape.
    return secrets.token_urlsafe(32)


def scram_verifier(password: str) -> str:
    """What ``ALTER ROLE ... PASSWORD`` stores for ``password`` (RFC 5802/7677); SASLprep
    leaves the ASCII passwords of :func:`generate` unchanged."""
    salt = secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, _ITERATIONS)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()

    def b64(raw: bytes) -> str:
        return base64.b64encode(raw).decode()

    return f"SCRAM-SHA-256${_ITERATIONS}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def read_passfile(path: Path) -> dict[str, str]:
    """User name to password, from the lines this module writes (any host, port, database)."""
    try:
        text = path.read_text()
    except OSError:
        return {}
    found = {}
    for line in text.splitlines():
        parts = line.split(":")
        if len(parts) == 5 and parts[:3] == ["*", "*", "*"]:
            found[parts[3]] = parts[4]
    return found


def write_passfile(path: Path, passwords: dict[str, str], owner: tuple[int, int] | None) -> None:
    """Replace ``path`` atomically by a 0600 passfile (owned by ``owner`` when given).

    Any host and port: the port changes at every start and a hot standby made from the
    cluster (tests) shares its roles."""
    temporary = path.with_name(path.name + ".new")
    temporary.unlink(missing_ok=True)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        for user, password in passwords.items():
            f.write(f"*:*:*:{user}:{password}\n")
    if owner is not None:
        os.chown(temporary, *owner)
    os.replace(temporary, path)

