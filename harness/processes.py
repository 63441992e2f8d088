"""Processes seen through Linux /proc (children, command lines, nice values), and stopping one."""

from __future__ import annotations

import subprocess
from pathlib import Path


def _stat_fields(pid: int) -> list[str]:
    """/proc/<pid>/stat after the command name (which may hold spaces): field 3 (state) comes first."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]


def nice(pid: int) -> int:
    return int(_stat_fields(pid)[16])  # field 19


def children(pid: int) -> list[int]:
    """Live processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = _stat_fields(int(entry.name))
        except OSError:
            continue  # exited meanwhile
        if int(fields[1]) == pid and fields[0] not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def worker_children(pid: int) -> list[int]:
    """The `python -m service worker` children of `pid` (the embedded service's worker process)."""
    out = []
    for child in children(pid):
        try:
            args = cmdline(child)
        except OSError:
            continue
        if args[1:4] == ["-m", "service", "worker"]:
            out.append(child)
    return out


def stop(proc: subprocess.Popen[bytes] | subprocess.Popen[str], timeout: float = 20) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `timeout` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
