"""dlbench.runner.models: definitions, canonical weights, equalised conventions and FLOPs counts."""

from __future__ import annotations

import numpy as np
import pytest

from dlbench.runner.models import definitions as models
from dlbench.runner.models.conventions import (CONVENTIONS, check_perturbation, fairness_note, perturbed,
                                       perturbed_weights)
from dlbench.runner.models.flops import forward_flops
from dlbench.runner.models.weights import initial_weights, parameter_count, parameter_shapes
from dlbench.runner.workloads.catalog import WORKLOADS, flops_per_sample, get_workload, size_profile


def test_flops_match_a_hand_count_of_the_tiny_resnet():
    # stem 3x3 3->8 on 8x8; stage0 two 3x3 8->8 on 8x8; stage1 3x3 8->16 stride 2 (4x4 out),
    # 3x3 16->16 on 4x4, 1x1 projection 8->16 on 4x4; head 16->10
    macs = (8 * 8 * 9 * 3 * 8 + 2 * 8 * 8 * 9 * 8 * 8 + 4 * 4 * 9 * 8 * 16 + 4 * 4 * 9 * 16 * 16
            + 4 * 4 * 8 * 16 + 16 * 10)
    assert forward_flops(models.RESNET_TINY) == 2 * macs == 290112


def _strided_1x1_inputs(definition: models.ResNetDefinition) -> list[int]:
    return [block.inputs for block in models.residual_blocks(definition)
            if block.projection and block.stride > 1]


def test_no_definition_gives_a_strided_1x1_conv_fewer_inputs_than_the_avx2_block():
    # fewer crash Keras-on-torch's backward pass (heap corruption in oneDNN; definitions.py)
    resnets = {profile.definition for workload in WORKLOADS.values()
               for profile in workload.profiles if profile.definition.family == "resnet"}
    assert models.RESNET_TINY in resnets
    inputs = [n for definition in resnets for n in _strided_1x1_inputs(definition)]
    assert inputs and min(inputs) >= models.MIN_STRIDED_1X1_INPUTS
    previous_tiny = models.ResNetDefinition("resnet-tiny", 8, ((1, 4, 1), (1, 8, 2)), stem_width=4)
    assert _strided_1x1_inputs(previous_tiny) == [4]  # the layout that crashed


def test_flops_match_hand_counts_of_the_tiny_sequence_models():
    # LSTM: 5 steps of 4 gates x 8 x (6 + 8) then 4 x 8 x (8 + 8); head 8 -> 10
    assert forward_flops(models.LSTM_TINY) == 2 * (5 * (448 + 512) + 80)
    # Transformer: per layer 6 tokens x (4 x 16 x 16 + 2 x 16 x 32) + 2 x 6 x 6 x 16; head 16 -> 10
    assert forward_flops(models.TRANSFORMER_TINY) == 2 * (2 * (6 * 2048 + 1152) + 160)


def test_known_sizes_have_their_published_parameter_and_mac_counts():
    assert parameter_count(models.RESNET50) == 25_557_032  # torchvision's resnet50
    assert forward_flops(models.RESNET50) / 2 == pytest.approx(4.09e9, rel=0.01)
    assert forward_flops(models.RESNET20) / 2 == pytest.approx(41e6, rel=0.01)
    assert 0.26e6 < parameter_count(models.RESNET20) < 0.28e6


def test_flops_per_sample_follows_the_device_profile_and_covers_old_workloads():
    assert flops_per_sample("mlp-digits") == 2 * (64 * 128 + 128 * 64 + 64 * 10)
    assert flops_per_sample("resnet-synthetic", "cpu") == forward_flops(models.RESNET20)
    assert flops_per_sample("resnet-synthetic", "cuda") == forward_flops(models.RESNET50)
    assert all(flops_per_sample(name) > 0 for name in WORKLOADS)


def test_weights_are_seeded_canonical_and_complete():
    first, again = initial_weights(models.RESNET_TINY), initial_weights(models.RESNET_TINY)
    assert list(first) == list(parameter_shapes(models.RESNET_TINY))
    assert all(np.array_equal(first[k], again[k]) and first[k].dtype == np.float32 for k in first)
    assert first["stem.conv.kernel"].shape == (3, 3, 3, 8)  # HWIO
    assert first["stage1.block0.shortcut.conv.kernel"].shape == (1, 1, 8, 16)
    assert np.all(first["stem.bn.variance"] == 1.0) and np.all(first["head.bias"] == 0.0)
    assert "stage0.block0.shortcut.conv.kernel" not in first  # identity shortcut
    assert not np.array_equal(initial_weights(models.RESNET_TINY, seed=1)["head.kernel"],
                              first["head.kernel"])


def test_conventions_are_written_in_each_fairness_note():
    resnet, transformer, lstm = (fairness_note(d) for d in (
        models.RESNET20, models.BERT_MINI, models.LSTM_CPU))
    assert "momentum 0.1 in PyTorch's meaning" in resnet and "Keras momentum 0.9" in resnet
    assert "epsilon 1e-05" in resnet and "symmetric" in resnet and "unbiased" in resnet
    assert "GELU exact (erf)" in transformer and "1/sqrt(head width)" in transformer
    assert "no mask" in transformer and "LayerNorm epsilon 1e-05" in transformer
    assert "input, forget, cell, output" in lstm and "bias_hh" in lstm
    assert "tanh approximation" in fairness_note(models.BERT_MINI, perturbed(CONVENTIONS,
                                                                             "gelu-tanh"))
    assert "unlike PyTorch's symmetric" in fairness_note(models.RESNET20, perturbed(
        CONVENTIONS, "same-padding"))


def test_lstm_gate_order_perturbation_swaps_cell_and_output_blocks():
    weights = initial_weights(models.LSTM_TINY)
    changed = perturbed_weights(weights, "lstm-gate-order")
    width = models.LSTM_TINY.width
    np.testing.assert_array_equal(changed["lstm0.kernel"][:, 2 * width:3 * width],
                                  weights["lstm0.kernel"][:, 3 * width:])
    assert changed["head.kernel"] is weights["head.kernel"]
    assert perturbed_weights(weights, "gelu-tanh") is weights
    assert perturbed(CONVENTIONS, "batchnorm-momentum").keras_batchnorm_momentum == 0.99
    with pytest.raises(ValueError, match="valid: gelu-tanh, batchnorm-momentum, .*lstm-gate-order"):
        check_perturbation("relu6")


def test_size_profiles_name_the_valid_ones():
    workload = get_workload("transformer-tokens")
    assert size_profile(workload, "gpu").definition == models.BERT_BASE
    assert size_profile(workload, "gpu").batch_size >= 32
    assert size_profile(get_workload("resnet-synthetic"), "gpu").batch_size >= 128
    with pytest.raises(ValueError, match="valid: cpu, gpu, tiny"):
        size_profile(workload, "tpu")
    with pytest.raises(ValueError, match="not a dlbench.runner.models workload"):
        size_profile(get_workload("mlp-digits"), "cpu")


def test_the_recorded_bound_is_above_its_probes_and_says_how_it_was_derived(monkeypatch):
    from dlbench.runner.driver.machine.environment import compute_peak
    from dlbench.runner.driver.machine.kernels import PROBE_CACHE

    monkeypatch.delenv(PROBE_CACHE)  # measured here, not the session's kept peak
    peak = compute_peak()
    assert peak["fp32_flops"] > 1e8  # any CPU of the last decades does 0.1 GFLOP/s
    assert "matmul" in peak["probe"]
    probes = peak["probes"]
    assert probes["numpy_fp32_flops"] > 0 and probes["torch_fp32_flops"] > 0
    # a bound: the probes (measured the same way as the clock, best of several) stay below
    assert peak["fp32_flops"] >= max(probes["numpy_fp32_flops"], probes["torch_fp32_flops"])
    assert peak["bf16_flops"] >= probes["torch_bf16_flops"]
    assert "FLOP per cycle per core" in peak["fp32_flops_basis"]
    assert peak["clock"]["ghz"] or peak["clock"]["why"]


def test_list_shows_each_workloads_profiles_parameters_and_flops():
    from rich.console import Console

    from dlbench.cli.listing import workload_table

    console = Console(width=200, record=True)
    console.print(workload_table())
    lines = console.export_text().splitlines()
    resnet = next(i for i, line in enumerate(lines) if "resnet-synthetic" in line)
    assert all(part in lines[resnet] for part in ("cpu", "resnet-20", "272,474", "81.6M"))
    assert all(part in lines[resnet + 1] for part in ("gpu", "resnet-50", "25,557,032", "8.18G"))
    mlp = next(line for line in lines if "mlp-digits" in line)
    assert "17,226" in mlp and "34k" in mlp


@pytest.mark.slow
@pytest.mark.parametrize("definition", [models.RESNET20, models.BERT_MINI, models.LSTM_CPU],
                         ids=lambda d: d.name)
def test_pytorch_builds_the_cpu_sizes_with_the_canonical_parameters_and_function(definition):
    import torch

    from dlbench.runner.models.reference_forward import forward
    from dlbench.runner.models import pytorch as builder

    weights = initial_weights(definition)
    model = builder.build(definition, weights).eval()
    trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert trained == parameter_count(definition)
    rng = np.random.default_rng(5)
    if definition.family == "resnet":
        x = rng.uniform(size=(2, *definition.input_shape)).astype(np.float32)
        inputs = torch.from_numpy(builder.images_to_nchw(x))
    else:
        x = rng.integers(0, definition.vocabulary, size=(2, definition.sequence)).astype(np.int32)
        inputs = torch.from_numpy(x)
    with torch.inference_mode():
        logits = model(inputs).numpy()
    expected, _ = forward(definition, weights, x)
    assert np.abs(logits - expected).max() <= 1e-4 * np.abs(expected).max()


def test_pytorch_refuses_a_padding_it_cannot_apply():
    from dlbench.runner.models import pytorch as builder

    with pytest.raises(ValueError, match="pad symmetrically"):
        builder.build(models.RESNET_TINY, initial_weights(models.RESNET_TINY),
                      perturbed(CONVENTIONS, "same-padding"))


def test_lstm_forget_gate_biases_start_at_one_and_the_other_gates_at_zero():
    bias = initial_weights(models.LSTM_TINY)["lstm0.bias"]
    i, f, c, o = np.split(bias, 4)
    assert np.all(f == 1.0) and not np.any(np.concatenate([i, c, o]))
