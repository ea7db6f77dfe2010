"""Stop training at the first non-finite number, before it can count as a result.

A diverged fine-tune looks like complete bias removal: NaN weights give NaN sentence
scores, and a NaN comparison is never "biased". The trainer also hides NaN losses from
its log unless `logging_nan_inf_filter` is off (the runner turns it off). So
`NonFiniteGuard` checks the trainable weights after every optimizer step and every
logged loss; it runs before the checkpoint evaluation and raises, so the checkpoint
of that step is neither evaluated, nor saved, nor marked complete. `finite_perplexity`
applies the same rule to held-out perplexity, where a huge but finite loss overflows.
"""

from __future__ import annotations

import math

import torch
from transformers import TrainerCallback

from queerbias.distributed import process_state
from queerbias.errors import QueerbiasError
from queerbias.models.loading import non_finite_parameters

_LARGEST_EXPONENT = math.log(torch.finfo(torch.float64).max)


class NonFiniteTraining(QueerbiasError):
    """Training produced NaN or infinity: the run has diverged (or started broken)."""


_ADVICE = ("lower learning_rate (or max_grad_norm, or use precision fp32 or auto); checkpoints saved "
           "before stay complete, and a rerun resumes from the last of them")


class NonFiniteGuard(TrainerCallback):
    """Raises `NonFiniteTraining` at the first step whose weights or logged loss are not finite."""

    def on_step_end(self, args, state, control, model=None, **kwargs):
        broken = non_finite_parameters(model, trainable_only=True) if model is not None else []
        if _any_process(bool(broken)):
            where = f" ({', '.join(broken)})" if broken else " (on another process)"
            raise NonFiniteTraining(f"step {state.global_step}: the weights became NaN or "
                                    f"infinite{where}: the run has diverged; {_ADVICE}")

    def on_log(self, args, state, control, logs=None, **kwargs):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(loss):
            raise NonFiniteTraining(f"step {state.global_step}: the training loss is {loss}; "
                                    f"{_ADVICE}")


def finite_perplexity(mean_nll: float, model: torch.nn.Module) -> float:
    """exp(mean negative log-likelihood), refused when it is NaN or overflows."""
    if math.isfinite(mean_nll) and mean_nll < _LARGEST_EXPONENT:
        return math.exp(mean_nll)
    broken = non_finite_parameters(model)
    cause = (f"its weights hold NaN or infinity ({', '.join(broken)})" if broken else
             "the model has diverged")
    raise NonFiniteTraining(f"held-out perplexity is not finite (mean loss {mean_nll:.4g} nats "
                            f"per token): {cause}; {_ADVICE}")


def _any_process(flag: bool) -> bool:
    """`flag` or'ed over all processes, so every process stops at the same step."""
    state = process_state()
    if state.num_processes == 1 or not torch.distributed.is_initialized():
        return flag
    value = torch.tensor([float(flag)], device=state.device)
    torch.distributed.all_reduce(value)
    return bool(value.item())
