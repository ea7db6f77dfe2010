"""Group variable-length inputs into padded batches, and back off on out-of-memory."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import torch

log = logging.getLogger(__name__)

CPU_TOKEN_BUDGET = 2048
GPU_TOKEN_BUDGET = 65536


class BatchSize:
    """A fixed number of sequences per batch, or 'auto': a padded-token budget that
    halves whenever a batch runs out of memory (and stays halved)."""

    def __init__(self, value: int | str, device: torch.device):
        if value == "auto":
            self.max_sequences = None
            self.token_budget = GPU_TOKEN_BUDGET if device.type == "cuda" else CPU_TOKEN_BUDGET
        else:
            self.max_sequences = int(value)
            if self.max_sequences < 1:
                raise ValueError("batch size must be at least 1")
            self.token_budget = None

    def plan(self, lengths: Sequence[int]) -> list[list[int]]:
        """Indices grouped into batches, longest first (so memory trouble shows early)."""
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        batches, current = [], []
        for index in order:
            width = lengths[current[0]] if current else lengths[index]
            full = (self.max_sequences is not None and len(current) >= self.max_sequences) or (
                self.token_budget is not None and (len(current) + 1) * width > self.token_budget)
            if current and full:
                batches.append(current)
                current = []
            current.append(index)
        if current:
            batches.append(current)
        return batches

    def run(self, lengths: Sequence[int], step: Callable[[list[int]], None],
            plan: Callable[[list[int]], list[list[int]]] | None = None) -> None:
        """Call `step` on every batch, re-planning smaller batches after an OOM. `plan(indices)`: the
        batches of these indices under the current budget (default: by length, `plan_subset`)."""
        plan = plan or (lambda indices: self.plan_subset(lengths, indices))
        pending = plan(list(range(len(lengths))))
        while pending:
            batch = pending.pop(0)
            try:
                step(batch)
            except torch.OutOfMemoryError:
                if len(batch) == 1 or self.token_budget is None:
                    raise
                torch.cuda.empty_cache()
                self.token_budget = max(1, self.token_budget // 2)
                log.warning("out of memory; token budget now %d", self.token_budget)
                pending = plan(batch + [i for planned in pending for i in planned])

    def plan_subset(self, lengths: Sequence[int], indices: list[int]) -> list[list[int]]:
        sub = self.plan([lengths[i] for i in indices])
        return [[indices[j] for j in batch] for batch in sub]


def pad_right(rows: Sequence[Sequence[int]], pad_id: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids and attention mask: position ids then start at 0 for every row."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return ids.to(device), mask.to(device)
