"""Failures of the machine rather than of the input, as the one line every refusal is.

A full disk, a closed pipe (`queerbias score ... | head`), a terminal that cannot show
German text, or a cache folder we may not write are not bugs, so they get no traceback:
`describe` says what happened and what to do, and the CLI exits with status 2. Writes
are atomic (`fileio`), so such a failure leaves the old file or none, never half a result.
"""

from __future__ import annotations

import errno
import os
import re
import sys

from queerbias.cache import ENV_VAR, cache_root

_SAMPLE = "äöüß–"  # what our output holds: German text and dashes
#: how a library written in Rust reports the operating system's error (safetensors: "... (os error 28)")
_RUST_OS_ERROR = re.compile(r"\(os error (\d+)\)")
#: torch's zip writer failing mid-file (a full disk: torch.save of a checkpoint's optimizer state)
_TORCH_WRITE = ("PytorchStreamWriter failed writing", "unexpected pos")


def stdout_problem() -> str | None:
    """Why stdout cannot take our output (an ASCII-only locale), checked before any work starts."""
    encoding = getattr(sys.stdout, "encoding", None)
    if not encoding or getattr(sys.stdout, "errors", "strict") != "strict":
        return None
    try:
        _SAMPLE.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return (f"standard output takes only {encoding} text, but results hold German text; use a UTF-8 "
                "locale or set PYTHONIOENCODING=utf-8")
    return None


def working_folder_problem() -> str | None:
    """Why the working folder cannot be used (it was deleted after the shell entered it), checked
    before any work starts: `os.getcwd()` then fails with an ENOENT that names no path."""
    try:
        os.getcwd()
    except FileNotFoundError:
        try:
            where = os.readlink("/proc/self/cwd").removesuffix(" (deleted)")
        except OSError:  # not Linux
            where = os.environ.get("PWD", "")
        return (f"the working folder {where or '(unknown)'} no longer exists (deleted after the shell entered it); "
                "cd into a folder that exists and run the command again")
    return None


def as_os_error(err: BaseException) -> OSError | None:
    """The operating-system failure behind `err`, where a library reported one in its own exception
    (safetensors' `SafetensorError: ... No space left on device (os error 28)` while a model is saved,
    torch's stream writer failing mid-checkpoint); None for anything else."""
    if isinstance(err, OSError):
        return err
    found = _RUST_OS_ERROR.search(str(err))
    if found and type(err).__name__ == "SafetensorError":
        return OSError(int(found[1]), os.strerror(int(found[1])))
    if isinstance(err, RuntimeError) and any(mark in str(err) for mark in _TORCH_WRITE):
        return OSError(errno.EIO, "torch could not finish writing a checkpoint (is the disk full?); free some space "
                                  "and run the same command again to resume")
    return None


def describe(err: OSError | UnicodeEncodeError) -> str:
    """One line for an operating-system failure."""
    if isinstance(err, UnicodeEncodeError):
        return (f"cannot write text as {err.encoding} (the character {err.object[err.start:err.end]!r}); use a "
                "UTF-8 locale or set PYTHONIOENCODING=utf-8")
    where = f" ({err.filename})" if err.filename else ""
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"no space left on the device{where}; free some space and run the same command again to resume"
    if err.errno == errno.EPIPE:
        return "the output was closed before everything was written (a pipe to `head`?)"
    if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        hint = ""
        if err.filename and str(err.filename).startswith(str(cache_root())):
            hint = f"; the cache is {cache_root()}: make it writable or set {ENV_VAR} to a folder you can write"
        return f"{os.strerror(err.errno).lower()}{where}{hint}"
    return f"{err.strerror or err}{where}"


def silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so Python's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no file descriptor (captured in tests)
        pass
