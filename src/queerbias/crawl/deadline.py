"""A total deadline per request, for both crawlers' HTTP clients.

A socket timeout bounds each read, not the request: a server that sends one byte every
half second never trips a 1 s timeout and can hold a request for as long as it likes
(25 s were measured). `RequestDeadline` tracks the sockets its client opens and, when a
request is not done within its time, shuts them down from a timer thread, which makes the
blocked read fail at once; the request is then reported as timed out. A client's per-read
timeout of the same length runs out at the same moment, and on a busy machine it may fail the
read before the timer thread gets to run: whether the deadline has passed is therefore read off
the clock, not off the timer, so the request is reported as cut off at its deadline either way.
"""

from __future__ import annotations

import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class DeadlinePassed(Exception):
    """The request was cut off at its total deadline."""


class RequestDeadline:
    """The sockets of one client, and a timer per request that shuts them down when time is up."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._clock = clock  # the clock socket timeouts run on

    def track(self, sock: socket.socket) -> socket.socket:
        with self._lock:
            self._sockets.add(sock)
        return sock

    @contextmanager
    def within(self, seconds: float | None) -> Iterator[None]:
        """Run a request; DeadlinePassed if it was not over after `seconds` (None: no deadline)."""
        if not seconds:
            yield
            return
        state = {"over": False, "expired": False}
        start = self._clock()

        def expire() -> None:
            with self._lock:
                if state["over"]:
                    return
                state["expired"] = True
                sockets = list(self._sockets)
            for sock in sockets:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass  # already closed

        timer = threading.Timer(seconds, expire)
        timer.daemon = True
        timer.start()
        try:
            yield
        except Exception:
            if state["expired"] or self._clock() - start >= seconds:
                raise DeadlinePassed(f"no complete answer within {seconds:g} s") from None
            raise
        finally:
            with self._lock:
                state["over"] = True
            timer.cancel()
        if state["expired"]:  # the cut may also look like a short, complete answer
            raise DeadlinePassed(f"no complete answer within {seconds:g} s")
