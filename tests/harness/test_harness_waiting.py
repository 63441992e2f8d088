"""harness.waiting: the one bounded wait returns what the check found, names what it waited for when time runs
out, and lets a check stop it early."""

from __future__ import annotations

import pytest

from harness.waiting import holds, wait_until


def test_returns_the_first_truthy_answer() -> None:
    answers = iter([None, 0, "", "found", "later"])
    assert wait_until(lambda: next(answers), 5, "an answer", interval=0) == "found"


def test_times_out_naming_what_it_waited_for() -> None:
    with pytest.raises(TimeoutError, match="timed out after 0 s waiting for the moon"):
        wait_until(lambda: False, 0, "the moon", interval=0)


def test_a_check_that_raises_stops_the_wait() -> None:
    def exited() -> bool:
        raise RuntimeError("the process exited")

    with pytest.raises(RuntimeError, match="exited"):
        wait_until(exited, 5, "a process")


def test_holds_counts_the_named_errors_as_not_yet() -> None:
    answers = iter([ConnectionError, ConnectionError, True])

    def connect() -> bool:
        answer = next(answers)
        if answer is ConnectionError:
            raise ConnectionError("not listening yet")
        return True

    assert wait_until(holds(connect, ConnectionError), 5, "a server", interval=0) is True
    with pytest.raises(ValueError):
        holds(lambda: int("x"), ConnectionError)()  # any other error still stops the wait
