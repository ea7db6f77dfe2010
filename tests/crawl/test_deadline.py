"""The total deadline decides by its clock, not by which thread ran first.

A client's per-read timeout and the deadline's timer run out together when both have the
request's length; on a busy machine the read may fail before the timer thread runs. A fake
clock stands for that moment, and the timer is set far beyond the test, so the outcome does
not depend on how fast the machine is (the timer firing would give the same answer).
"""

from __future__ import annotations

import pytest

from queerbias.crawl.deadline import DeadlinePassed, RequestDeadline

NEVER = 3600.0  # seconds: the timer does not run during these tests


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_read_timeout_that_beats_the_timer_is_reported_as_the_deadline():
    clock = FakeClock()
    with pytest.raises(DeadlinePassed, match="no complete answer within 3600 s"):
        with RequestDeadline(clock).within(NEVER):
            clock.now += NEVER  # the socket's own timeout ran out with the deadline
            raise TimeoutError("timed out")


def test_an_error_before_the_deadline_is_the_error():
    clock = FakeClock()
    with pytest.raises(ConnectionResetError):
        with RequestDeadline(clock).within(NEVER):
            clock.now += NEVER - 0.001
            raise ConnectionResetError("reset by peer")


def test_an_answer_that_came_in_time_is_kept_however_late_the_clock_reads():
    clock = FakeClock()
    with RequestDeadline(clock).within(NEVER):
        clock.now += 2 * NEVER  # complete, and its sockets were never cut: nothing to report
