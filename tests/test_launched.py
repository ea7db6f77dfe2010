"""A refusal under accelerate's simple launcher reaches the launcher's stderr whole (accelerate 1.16 copies
the child's stderr from a pipe, and a line read as its SIGTERM handler fires is dropped): the child writes
nothing into the pipe before the launcher was signalled, and its line once the launcher, copying the pipe
to the end, terminates it. A real parent process stands in for the launcher, with accelerate's order of
steps (`accelerate/commands/launch.py: _run_subprocess`)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

LAUNCHER = textwrap.dedent("""
    import fcntl, signal, subprocess, sys, termios
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # a signal before the wait is kept
    child = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stderr=subprocess.PIPE,  # the child unblocked
                             preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM}))
    assert signal.sigtimedwait({signal.SIGTERM}, 60) is not None, "the child never ended its launcher"
    waiting = bytearray(4)
    fcntl.ioctl(child.stderr.fileno(), termios.FIONREAD, waiting)
    print("in the pipe when signalled:", int.from_bytes(waiting, sys.byteorder), flush=True)
    child.terminate()  # accelerate's handler: terminate the child, copy its stderr to the end
    print("then:", repr(child.stderr.read().decode()), flush=True)
    child.wait()
""")

CHILD = textwrap.dedent("""
    import os, threading
    from queerbias import launched
    threading.Thread(target=threading.Event().wait, daemon=True).start()  # as during training: not one thread
    launched._shares_stderr_with_parent = lambda: False
    launched._end_simple_launch(["queerbias train: error: refused"])
    os._exit(2)
""")


def test_the_refusal_line_is_written_only_after_the_launcher_was_signalled():
    done = subprocess.run([sys.executable, "-c", LAUNCHER, CHILD], capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines() == ["in the pipe when signalled: 0",
                                        "then: 'queerbias train: error: refused\\n'"], done.stderr[-2000:]

