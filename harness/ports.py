"""Free loopback ports for the servers tests start, safe under pytest-xdist.

A port is picked by binding port 0 and released before the child binds it. Two xdist workers picking at the
same moment could get the same one, so each worker takes only ports from its own blocks of two, an odd port
and the next (`(port - 1) // 2 % workers == worker`; Linux hands out odd ports for bind(0), keeping even ones
for outgoing connections): workers never pick the same port, and a block serves tests that need P and P + 1.
"""

from __future__ import annotations

import os
import socket


def _worker() -> tuple[int, int]:
    name = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ... under xdist
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    return (int(name[2:]) if name.startswith("gw") and name[2:].isdigit() else 0), max(count, 1)


def _bind(port: int) -> int | None:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return None
        return int(s.getsockname()[1])


def free_port(consecutive: int = 1) -> int:
    """A currently free port P on 127.0.0.1 of this worker's blocks; with `consecutive=2`, P + 1 free too."""
    index, count = _worker()
    for _ in range(2000):
        port = _bind(0)
        if port is None or (port - 1) // 2 % count != index:
            continue
        if consecutive == 1:
            return port
        if port % 2 == 1 and all(_bind(port + i) is not None for i in range(1, consecutive)):
            return port
    raise RuntimeError(f"no free port for xdist worker {index} of {count}")
