"""Processes as psutil sees them (children, command lines, nice values, CPU, memory), and stopping one."""

from __future__ import annotations

import os
import resource
import subprocess

import psutil

_GONE = (psutil.NoSuchProcess, psutil.ZombieProcess)


def alive(pid: int) -> bool:
    """Running: a zombie waiting to be reaped counts as exited."""
    try:
        return psutil.Process(pid).status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
    except _GONE:
        return False


def mentioning(text: str) -> list[int]:
    """Running processes other than this one whose command line contains `text`."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if proc.pid != os.getpid() and text in " ".join(proc.info["cmdline"] or ()) and alive(proc.pid):
                found.append(proc.pid)
        except (psutil.AccessDenied, *_GONE):
            continue
    return found


def cmdline(pid: int) -> list[str]:
    return psutil.Process(pid).cmdline()


def nice(pid: int) -> int:
    return int(psutil.Process(pid).nice())


def children(pid: int, *, recursive: bool = False) -> list[int]:
    """Live processes whose parent is `pid` (with `recursive`, every descendant); none once `pid` is gone."""
    try:
        kids = psutil.Process(pid).children(recursive=recursive)
    except _GONE:
        return []
    out = []
    for kid in kids:
        try:
            if kid.status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
                out.append(kid.pid)
        except _GONE:
            continue  # exited meanwhile
    return out


def worker_children(pid: int) -> list[int]:
    """The `python -m service worker` children of `pid` (the embedded service's worker process)."""
    out = []
    for child in children(pid):
        try:
            args = cmdline(child)
        except _GONE:
            continue
        if args[1:4] == ["-m", "service", "worker"]:
            out.append(child)
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far, all its threads (not its children's); 0 once it is gone."""
    try:
        times = psutil.Process(pid).cpu_times()
    except _GONE:
        return 0.0
    return float(times.user + times.system)


def tree_cpu_seconds() -> float:
    """User + system CPU of this process and everything below it: its waited-for children's, and each live
    descendant's so far (with its own waited-for children's). A daemon that left the tree is not in it."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    waited = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime
    for child in psutil.Process().children(recursive=True):
        try:
            t = child.cpu_times()
        except _GONE:  # reaped since it was listed: its parent's waited-for CPU has it, or nothing does
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return float(total)


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MiB; 0 once it is gone."""
    try:
        return float(psutil.Process(pid).memory_info().rss) / 2**20
    except _GONE:
        return 0.0


def stop(proc: subprocess.Popen[bytes] | subprocess.Popen[str], timeout: float = 20) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `timeout` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
