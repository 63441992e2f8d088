"""Test-server ports: each xdist worker picks from its own blocks, so two workers never pick the same port."""

from __future__ import annotations

import socket

import pytest

from harness.ports import free_port


@pytest.mark.parametrize("worker", [0, 1, 2])
def test_each_worker_picks_only_its_own_blocks_of_two(worker: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{worker}")
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "3")
    for _ in range(20):
        assert (free_port() - 1) // 2 % 3 == worker
    base = free_port(consecutive=2)
    assert base % 2 == 1 and (base - 1) // 2 % 3 == worker
    for port in (base, base + 1):  # both free: a server can bind them
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
