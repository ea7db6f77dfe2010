"""Entry script: `accelerate launch train/finetune.py --config configs/NAME.yaml [key=value ...]`
is `queerbias train --config ...` run under accelerate."""

import sys

from queerbias.cli import main

if __name__ == "__main__":
    sys.exit(main(["train", *sys.argv[1:]]))
