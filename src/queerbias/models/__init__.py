"""Model specs -> loaded models: Hub ids, local folders, PEFT adapters, the embedded Gemma."""

from queerbias.models.loading import LoadedModel, load_model

__all__ = ["LoadedModel", "load_model"]
