"""Entry script: `accelerate launch train/finetune.py --config configs/NAME.yaml [key=value ...]`
is `queerbias train --config ...` run under accelerate (a refusal is one line: `queerbias.launched`)."""

from queerbias.launched import run

if __name__ == "__main__":
    run("train")
