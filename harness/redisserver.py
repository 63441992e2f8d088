"""A throwaway Redis server on loopback for the queue-backend tests (Debian's `redis-server`).

No persistence (`--save ""`, no AOF), its own temp dir and port; stopped by PID and removed afterwards.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

import redis

from harness.ports import free_port
from harness.waiting import holds, wait_until


class RedisServerError(RuntimeError):
    pass


def find_redis_server() -> str:
    path = shutil.which("redis-server")
    if path is None:
        raise RedisServerError("redis-server is not installed (Debian: apt-get install redis-server)")
    return path


class RedisServer:
    def __init__(self, start_timeout: float = 30.0) -> None:
        self.start_timeout = start_timeout
        self.port = 0
        self.dir: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        binary = find_redis_server()
        self.dir = Path(tempfile.mkdtemp(prefix="redis-"))
        self.port = free_port()
        args = [
            binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.dir),
            "--logfile",
            str(self.dir / "redis.log"),
        ]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        proc = self.proc

        def answers() -> bool:
            if proc.poll() is not None:
                raise RedisServerError("redis-server exited")
            return bool(redis.Redis.from_url(self.url, socket_timeout=1).ping())

        try:
            wait_until(holds(answers, redis.ConnectionError), self.start_timeout, "redis-server")
        except (TimeoutError, RedisServerError) as exc:
            log = (self.dir / "redis.log").read_text(errors="replace") if self.dir else ""
            self.stop()
            raise RedisServerError(f"redis-server did not start ({exc}):\n{log[-2000:]}") from exc
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
