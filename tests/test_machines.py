"""A machine kind in words and as a stable key (dlbench.core.machine.machines), on environment
records of the three CPU kinds the project has run on and on the committed releases' own records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dlbench.core.machine.machines import isa_tier, kernel_words, machine_kind, model_family

RELEASES = Path(__file__).resolve().parent.parent / "results" / "releases"

X86 = {"arch": "X86_64", "logical_cores": 2, "physical_cores": 2, "usable_cores": 2,
       "avx2": True, "neon": False, "sve": False}
INTEL_AMX = {"cpu": X86 | {
    "vendor": "Intel", "model": "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz",
    "avx512f": True, "avx512_bf16": True, "avx512_vnni": True, "avx_vnni": True,
    "avx512_fp16": True, "amx_bf16": True, "amx_fp16": False, "amx": True,
    "framework_kernels": {"tensorflow": {"onednn_custom_ops": True},
                          "torch": {"cpu_capability": "AVX512"},
                          "openvino": {"default_inference_precision": "bf16"}}}}
AMD_BF16 = {"cpu": X86 | {
    "vendor": "AMD", "model": "AMD EPYC 9B14", "avx512f": True, "avx512_bf16": True,
    "avx512_vnni": True, "avx_vnni": True, "avx512_fp16": False, "amx_bf16": False,
    "amx_fp16": False, "amx": False}}
AMD_AVX2 = {"cpu": X86 | {
    "vendor": "AMD", "model": "AMD EPYC 7B13", "avx512f": False, "avx512_bf16": False,
    "avx512_vnni": False, "avx_vnni": False, "avx512_fp16": False, "amx_bf16": False,
    "amx_fp16": False, "amx": False,
    "framework_kernels": {"tensorflow": {"onednn_custom_ops": False},
                          "torch": {"cpu_capability": "AVX2"},
                          "openvino": {"default_inference_precision": "f32"}}}}


@pytest.mark.parametrize(("environment", "key", "words"), [
    (INTEL_AMX, "intel-xeon/amx", "Intel Xeon, 2 cores, AMX, AVX-512 BF16"),
    (AMD_BF16, "amd-epyc/avx512-bf16", "AMD EPYC, 2 cores, AVX-512 BF16"),
    (AMD_AVX2, "amd-epyc/avx2", "AMD EPYC, 2 cores, AVX2 only"),
])
def test_each_cpu_kind_has_its_words_and_key(environment, key, words):
    kind = machine_kind(environment)
    assert (kind.key, kind.words) == (key, words)


@pytest.mark.parametrize(("flags", "tier"), [
    ({"avx512_vnni": True}, "avx512-vnni"), ({"avx_vnni": True}, "avx-vnni"),
    ({"avx512f": True}, "avx512"), ({"avx2": False}, "pre-avx2"), ({}, "avx2"),
])
def test_each_isa_tier_below_bf16(flags, tier):
    assert isa_tier({"arch": "X86_64"} | flags)[0] == tier


def test_arm_cpus_are_told_by_sve_or_neon():
    assert isa_tier({"arch": "ARM_8", "neon": True, "sve": True}) == ("sve", "SVE")
    assert isa_tier({"arch": "AARCH64", "neon": True}) == ("neon", "NEON")


def test_a_model_family_leaves_out_part_numbers_and_marks():
    assert model_family({"model": "Intel(R) Xeon(R) Processor"}) == "Intel Xeon"
    assert model_family({"model": "AMD EPYC 7B13 64-Core Processor"}) == "AMD EPYC"
    assert model_family({"vendor": "AMD", "model": ""}) == "AMD CPU"
    assert model_family({}) == "unknown CPU"


def test_the_same_kind_has_one_key_whatever_else_differs():
    """Cores and the model number are words, not the kind: ratios travel between them."""
    bigger = {"cpu": AMD_BF16["cpu"] | {"usable_cores": 8, "model": "AMD EPYC 9654"}}
    assert machine_kind(bigger).key == machine_kind(AMD_BF16).key
    assert machine_kind(bigger).words == "AMD EPYC, 8 cores, AVX-512 BF16"
    assert len({machine_kind(e).key for e in (INTEL_AMX, AMD_BF16, AMD_AVX2)}) == 3


def test_the_frameworks_kernel_choices_in_words():
    assert kernel_words(AMD_AVX2) == ("TensorFlow's oneDNN custom operations off; PyTorch's "
                                      "CPU kernels AVX2; OpenVINO's default precision f32")
    assert kernel_words(AMD_BF16) == ""  # recorded before the machine record had them


def test_the_committed_releases_machines_read_as_their_kinds():
    """Old runs' environment.json files (fewer flags, no vendor) still read, with the key a
    new record of the same machine gets."""
    kinds = {}
    for path in sorted(RELEASES.glob("*/runs/*/environment.json")):
        kinds[path.parts[-4]] = machine_kind(json.loads(path.read_text()))
    assert kinds["2027.01"].key == machine_kind(INTEL_AMX).key
    assert kinds["2027.01"].words == "Intel Xeon, 2 cores, AMX, AVX-512 BF16"
    assert kinds["2027.02"].key == kinds["2026.12"].key == machine_kind(AMD_BF16).key
    assert kinds["2027.03"].key == machine_kind(AMD_AVX2).key
    assert kinds["2027.03"].words == "AMD EPYC, 2 cores, AVX2 only"
