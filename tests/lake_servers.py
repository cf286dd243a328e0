"""A real PostgreSQL and a local S3 server (moto) on 127.0.0.1, started and stopped by the tests.

PostgreSQL comes from Debian's `postgresql` package (.ci/run installs it when missing), moto
from the dev dependency group. Each runs in a temporary folder on a free port; as root, the
cluster runs as the `postgres` user (initdb refuses root). Anything missing or failing to start
makes the tests that need it skip, saying why. The benchmark (bench/scale_out.py) uses the same.
"""

from __future__ import annotations

import glob
import os
import pwd
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

__all__ = ["MotoServer", "PostgresServer", "ServerUnavailable", "free_port", "moto_server",
           "postgres_server"]


class ServerUnavailable(RuntimeError):
    """The server cannot be started here; the message says why (tests skip with it)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    if found:
        return Path(found[0]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).resolve().parent
    raise ServerUnavailable("PostgreSQL is not installed (Debian: apt-get install postgresql)")


def _as_cluster_user(args: list[str]) -> list[str]:
    """`args` as the cluster's user: as root, the `postgres` user (initdb refuses root)."""
    if os.getuid() != 0:
        return args
    runuser = shutil.which("runuser")
    if runuser:
        return [runuser, "-u", "postgres", "--", *args]
    return ["su", "postgres", "-s", "/bin/sh", "-c", shlex.join(args)]


@dataclass(frozen=True, slots=True)
class PostgresServer:
    bin: Path
    port: int
    user: str

    def dsn(self, dbname: str) -> str:
        return f"host=127.0.0.1 port={self.port} user={self.user} dbname={dbname}"

    def create_database(self, name: str | None = None) -> str:
        name = name or f"lake_{uuid.uuid4().hex[:10]}"
        subprocess.run(_as_cluster_user([str(self.bin / "createdb"), "-h", "127.0.0.1", "-p",
                                         str(self.port), "-U", self.user, name]),
                       check=True, capture_output=True, timeout=60)
        return name


@contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """A throwaway cluster (trust authentication, 127.0.0.1 only)."""
    bin_dir = _pg_bin()
    user = pwd.getpwuid(os.getuid()).pw_name
    folder = Path(tempfile.mkdtemp(prefix="gpuprices-pg-"))
    if os.getuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(folder, ignore_errors=True)
            raise ServerUnavailable("running as root and there is no `postgres` user") from None
        user = "postgres"
        os.chmod(folder, 0o755)
        shutil.chown(folder, "postgres")
    data, port = folder / "data", free_port()

    def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(_as_cluster_user(list(args)), capture_output=True, text=True,
                              timeout=timeout, check=False)

    try:
        done = run(str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", user,
                   "--no-sync")
        if done.returncode != 0:
            raise ServerUnavailable(f"initdb failed: {done.stderr.strip()[-300:]}")
        done = run(str(bin_dir / "pg_ctl"), "-D", str(data), "-w", "-t", "60", "-l",
                   str(folder / "log"), "-o", f"-p {port} -k {folder} -c listen_addresses="
                   "127.0.0.1 -c fsync=off -c max_connections=200", "start")
        if done.returncode != 0:
            log = (folder / "log").read_text(errors="replace") if (folder / "log").exists() \
                else done.stderr
            raise ServerUnavailable(f"PostgreSQL did not start: {log.strip()[-300:]}")
        yield PostgresServer(bin_dir, port, user)
    finally:
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop", timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class MotoServer:
    endpoint: str  # http://127.0.0.1:PORT
    key_id: str = "gpuprices-test-key"
    secret: str = "gpuprices-test-secret-0123456789"
    region: str = "us-east-1"

    def env(self) -> dict[str, str]:
        return {"AWS_ACCESS_KEY_ID": self.key_id, "AWS_SECRET_ACCESS_KEY": self.secret,
                "AWS_REGION": self.region, "AWS_ENDPOINT_URL": self.endpoint}

    def create_bucket(self, name: str | None = None) -> str:
        name = name or f"lake-{uuid.uuid4().hex[:10]}"
        httpx.put(f"{self.endpoint}/{name}", timeout=30).raise_for_status()
        return name

    def objects(self, bucket: str) -> list[tuple[str, int]]:
        """(key, size) of every object in the bucket (moto's ListObjectsV2, first 1000)."""
        import xml.etree.ElementTree as ET

        text = httpx.get(f"{self.endpoint}/{bucket}?list-type=2", timeout=30).text
        ns = {"s3": "http://s3.amazonaws.com/doc/2006-03-01/"}
        return [(str(item.findtext("s3:Key", namespaces=ns)),
                 int(item.findtext("s3:Size", default="0", namespaces=ns)))
                for item in ET.fromstring(text).findall("s3:Contents", ns)]


@contextmanager
def moto_server() -> Iterator[MotoServer]:
    try:
        import moto.server  # noqa: F401
    except ImportError:
        raise ServerUnavailable("moto[server] is not installed (uv sync --group dev)") from None
    port = free_port()
    # moto's server, without its per-request log line (formatted even when thrown away: ~12 %
    # of its CPU under the scale benchmark's load)
    quiet = ("import logging, sys; from moto.server import main; "
             "logging.getLogger('werkzeug').setLevel(logging.ERROR); main(sys.argv[1:])")
    process = subprocess.Popen([sys.executable, "-c", quiet, "-H", "127.0.0.1", "-p",
                                str(port)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(endpoint, timeout=2)
                break
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise ServerUnavailable("the moto S3 server did not start") from None
                time.sleep(0.2)
        yield MotoServer(endpoint)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
