"""Entry script: `accelerate launch train/finetune.py --config configs/NAME.yaml [key=value ...]`
is `queerbias train --config ...` run under accelerate.

A refusal (bad config, diverged run) must be one line here too. But accelerate's
single-process launcher turns every non-zero exit of this script into a
`CalledProcessError` traceback of its own, whatever the exit code (accelerate 1.x,
`commands/launch.py: simple_launcher`; only its `--quiet` flag avoids it). So after
printing our line, the script ends the launcher that waits for it: the shell still
sees the failure (status 143, "Terminated"), and no traceback.
"""

import os
import signal
import sys
from pathlib import Path

from queerbias.cli import main


def _accelerate_simple_launcher() -> bool:
    """Whether the parent process is `accelerate launch` running this script alone.

    Multi-process launches (torch elastic) set LOCAL_RANK and report failures their own way.
    """
    if "LOCAL_RANK" in os.environ or "ACCELERATE_MIXED_PRECISION" not in os.environ:
        return False
    try:
        argv = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().split(b"\0")
    except OSError:  # not Linux
        return False
    return len(argv) > 2 and any(a.endswith(b"/accelerate") for a in argv[:2]) and b"launch" in argv


if __name__ == "__main__":
    try:
        status = main(["train", *sys.argv[1:]])
    except SystemExit as exit_:  # argparse: --help, or a usage error
        status = exit_.code
    if status == 2 and _accelerate_simple_launcher():
        sys.stderr.flush()
        os.kill(os.getppid(), signal.SIGTERM)
    sys.exit(status)
