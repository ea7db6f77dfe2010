"""The guides are true: every code block of docs/new-suite.md is the toy suite's code and every one of
docs/new-objective.md the toy objective's (a line may elide with `...`), and the toy suite and the toy
objective are what tests/suites/toy and tests/train/test_toy_objective.py run end to end."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GUIDES = {
    "docs/new-suite.md": ["tests/suites/toy/toy_suite.py"],
    "docs/new-objective.md": ["tests/train/toy_objective/config.py", "tests/train/toy_objective/objective.py",
                              "tests/train/toy_objective/trainer.py"],
}


def code_blocks(text: str) -> list[list[str]]:
    """The ```python blocks of a guide, but those showing a file of the package (`# src/...`)."""
    blocks = [block.strip("\n").splitlines() for block in re.findall(r"```python\n(.*?)```", text, re.S)]
    return [block for block in blocks if not block[0].startswith("# src/")]


def fragments(line: str) -> list[str]:
    """What of a guide's line the code must hold, in order: the line without its trailing comment, cut at
    each `...` elision."""
    code = re.sub(r"\s+#\s.*$", "", line).strip()
    return [part.strip() for part in code.split("...") if part.strip() and part.strip() not in (",", ")")]


def follows(block: list[str], source: list[str]) -> str | None:
    """None if every line of the block is found in the source in order (several on one source line where
    the guide wraps it), else the first line that is not."""
    position = 0
    for line in block:
        for part in fragments(line):
            found = next((i for i in range(position, len(source)) if part in source[i]), None)
            if found is None:
                return line
            position = found
    return None


@pytest.mark.parametrize("guide", GUIDES)
def test_every_code_block_of_the_guide_is_the_toys_code(guide):
    source = [line.strip() for path in GUIDES[guide] for line in (REPO / path).read_text().splitlines()]
    blocks = code_blocks((REPO / guide).read_text())
    assert len(blocks) >= 3
    missing = [(block[0], follows(block, source)) for block in blocks if follows(block, source) is not None]
    assert missing == []


def test_a_block_that_is_not_the_code_is_caught():
    source = ["def texts(self, items):", 'return [f"{name} ist normal." for name in items]']
    assert follows(["def texts(self, items):", "    return []"], source) == "    return []"
    assert follows(["def texts(self, items):", "    ..."], source) is None
