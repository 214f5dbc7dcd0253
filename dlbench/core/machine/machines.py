"""A run's machine kind, in words and as a stable key: the one owner of both.

A machine kind is what decides the frameworks' kernels and so the ratios between them:
the CPU's vendor and model family and the kernel-deciding instruction-set tier (AMX;
AVX-512 BF16; AVX-512 VNNI or AVX-VNNI, which turn TensorFlow's oneDNN custom operations on;
AVX-512; AVX2). Cores and memory belong to the words, not to the kind. The key is readable
("amd-epyc/avx512-bf16"), never a hash, and the same for a run recorded before the ISA
record grew (earlier releases record fewer flags: a missing flag reads as absent, and an
x86 CPU that records no avx2 flag is taken to have AVX2, as every CPU these frameworks'
wheels run on has).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

#: Kernel-deciding ISA tiers, strongest first: (key, the environment.json cpu flags that
#: put a CPU in it (any), its words).
X86_TIERS = (
    ("amx", ("amx", "amx_bf16"), "AMX"),
    ("avx512-bf16", ("avx512_bf16",), "AVX-512 BF16"),
    ("avx512-vnni", ("avx512_vnni",), "AVX-512 VNNI"),
    ("avx-vnni", ("avx_vnni",), "AVX-VNNI"),
    ("avx512", ("avx512f",), "AVX-512"),
)
ARM_TIERS = (("sve", ("sve",), "SVE"), ("neon", ("neon",), "NEON"))

#: Brand words after which a CPU's model family ends ("AMD EPYC 7B13" -> "AMD EPYC").
FAMILY_BRANDS = ("EPYC", "Ryzen", "Threadripper", "Xeon", "Core", "Atom", "Neoverse",
                 "Graviton", "Ampere", "M1", "M2", "M3", "M4")


@dataclass(frozen=True)
class MachineKind:
    """A machine in words ("Intel Xeon, 2 cores, AMX, AVX-512 BF16") and its kind's key."""

    key: str
    words: str


def machine_kind(environment: Mapping) -> MachineKind:
    """The machine kind of a run's environment record (environment.json)."""
    cpu = environment.get("cpu") or {}
    family = model_family(cpu)
    tier_key, tier_words = isa_tier(cpu)
    cores = cpu.get("usable_cores") or cpu.get("logical_cores")
    words = [family] + ([f"{cores} core" + ("" if cores == 1 else "s")] if cores else [])
    key = f"{_slug(family)}/{tier_key}"
    return MachineKind(key, ", ".join(words + [tier_words]))


def model_family(cpu: Mapping) -> str:
    """The CPU's vendor and model family in words ("Intel Xeon", "AMD EPYC")."""
    model = re.sub(r"\((R|TM|tm|r)\)", " ", str(cpu.get("model") or ""))
    model = re.sub(r"@.*$|\b(CPU|Processor)\b", " ", model)
    words = model.split()
    for index, word in enumerate(words):
        if word in FAMILY_BRANDS:
            words = words[:index + 1]
            break
    vendor = str(cpu.get("vendor") or "")
    if vendor and not (words and words[0] == vendor):
        words = [vendor, *words]
    if len(words) > 1:
        return " ".join(words)
    return f"{words[0]} CPU" if words else "unknown CPU"


def isa_tier(cpu: Mapping) -> tuple[str, str]:
    """The kernel-deciding ISA tier of a CPU record: its key and words. AMX says AVX-512
    BF16 beside it where the CPU has both (bf16 arithmetic outside the tiles)."""
    arch = str(cpu.get("arch") or "").upper()
    if arch.startswith(("ARM", "AARCH")):
        for key, flags, words in ARM_TIERS:
            if any(cpu.get(flag) for flag in flags):
                return key, words
        return "arm", "no NEON recorded"
    for key, flags, words in X86_TIERS:
        if any(cpu.get(flag) for flag in flags):
            if key == "amx" and cpu.get("avx512_bf16"):
                words += ", AVX-512 BF16"
            return key, words
    if cpu.get("avx2") is False:
        return "pre-avx2", "no AVX2"
    return "avx2", "AVX2 only"


def kernel_words(environment: Mapping) -> str:
    """Each framework's own kernel choice recorded for the machine, in words ("" for a run
    recorded before the machine record had them)."""
    kernels = (environment.get("cpu") or {}).get("framework_kernels") or {}
    said = []
    tensorflow = kernels.get("tensorflow") or {}
    if "onednn_custom_ops" in tensorflow:
        said.append("TensorFlow's oneDNN custom operations "
                    + ("on" if tensorflow["onednn_custom_ops"] else "off"))
    capability = (kernels.get("torch") or {}).get("cpu_capability")
    if capability:
        said.append(f"PyTorch's CPU kernels {capability}")
    precision = (kernels.get("openvino") or {}).get("default_inference_precision")
    if precision:
        said.append(f"OpenVINO's default precision {precision}")
    return "; ".join(said)


def _slug(words: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-") or "unknown"
