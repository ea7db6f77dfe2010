import pytest
import torch

from queerbias.errors import QueerbiasError
from queerbias.models import load_model
from queerbias.models.kinds import detect_kind
from queerbias.scoring.batching import BatchSize


def test_kind_detection_and_override(tiny_bert, tiny_gpt2):
    assert load_model(str(tiny_bert)).kind == "masked"
    assert load_model(str(tiny_gpt2)).kind == "causal"
    with pytest.raises(QueerbiasError, match="kind must be"):
        load_model(str(tiny_gpt2), kind="seq2seq")


def test_fingerprint_is_stable_and_content_based(tiny_gpt2):
    a, b = load_model(str(tiny_gpt2)), load_model(str(tiny_gpt2))
    assert a.fingerprint == b.fingerprint
    with torch.no_grad():
        b.model.transformer.h[0].mlp.c_fc.weight.mul_(1.01)
    from queerbias.models.fingerprint import weights_fingerprint
    assert weights_fingerprint(b.model) != a.fingerprint


def test_checkpoint_without_lm_head_is_refused(tiny_bert, tmp_path):
    from transformers import BertModel

    encoder_only = tmp_path / "encoder"
    BertModel.from_pretrained(tiny_bert).save_pretrained(encoder_only)
    with pytest.raises(QueerbiasError, match="would be random"):
        load_model(str(encoder_only), kind="masked")


def test_peft_adapter_folder_resolves_base_and_applies_adapter(tiny_gpt2, tmp_path):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(tiny_gpt2)
    peft_model = get_peft_model(base, LoraConfig(r=2, target_modules=["c_attn"], fan_in_fan_out=True))
    with torch.no_grad():
        for name, param in peft_model.named_parameters():
            if "lora_B" in name:
                param.fill_(0.05)  # B starts at zero; make the adapter change something
    peft_model.save_pretrained(tmp_path / "adapter")
    adapted = load_model(str(tmp_path / "adapter"))
    plain = load_model(str(tiny_gpt2))
    assert adapted.source["base"] == str(tiny_gpt2)
    assert adapted.fingerprint != plain.fingerprint
    assert not any("lora" in n for n, _ in adapted.model.named_parameters())  # merged


def test_unknown_architecture_asks_for_kind():
    from transformers import PretrainedConfig

    config = PretrainedConfig()
    config.model_type = "mystery"
    with pytest.raises(QueerbiasError, match="--kind"):
        detect_kind(config)


def test_auto_batch_size_backs_off_on_out_of_memory():
    sizes = BatchSize("auto", torch.device("cpu"))
    sizes.token_budget = 64
    seen = []

    def step(batch):
        if len(batch) * 8 > 16:
            raise torch.OutOfMemoryError("simulated")
        seen.extend(batch)

    sizes.run([8] * 10, step)
    assert sorted(seen) == list(range(10))
    assert sizes.token_budget == 16


def test_fixed_batch_size_does_not_hide_out_of_memory():
    sizes = BatchSize(4, torch.device("cpu"))

    def step(batch):
        raise torch.OutOfMemoryError("simulated")

    with pytest.raises(torch.OutOfMemoryError):
        sizes.run([8] * 5, step)
