"""What a CPU's flags say: the instruction-set features that decide the frameworks' kernels
and bf16's arithmetic units, read from /proc/cpuinfo. Read by the driver (the environment
record) and by the worker (a precision cell's bf16 units, a backend's known crashes)."""

from __future__ import annotations

from pathlib import Path

#: environment.json cpu key -> the CPU flags (cpuinfo / /proc/cpuinfo) that set it.
ISA_FLAGS = {
    "avx2": ("avx2",),
    "avx512f": ("avx512f",),
    "avx512_bf16": ("avx512_bf16",),
    "avx512_vnni": ("avx512_vnni", "avx512vnni"),
    "avx_vnni": ("avx_vnni",),
    "avx512_fp16": ("avx512_fp16",),
    "amx_bf16": ("amx_bf16",),
    "amx_fp16": ("amx_fp16",),
    "neon": ("neon", "asimd"),
    "sve": ("sve",),
}

def isa_features(flags: set[str]) -> dict[str, bool]:
    """The kernel-deciding ISA features of a CPU with `flags`, keyed as environment.json
    records them (AMX: any amx_* unit)."""
    features = {key: any(flag in flags for flag in names) for key, names in ISA_FLAGS.items()}
    return features | {"amx": any(flag.startswith("amx") for flag in flags)}


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> set[str]:
    """This machine's CPU flags (empty where /proc/cpuinfo does not say)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return set()
    line = next((row for row in text.splitlines()
                 if row.startswith(("flags", "Features"))), "")
    return set(line.partition(":")[2].split())


def bf16_units(features: dict[str, bool]) -> str:
    """The CPU's bf16 arithmetic units in words, from its isa_features; without any, bf16 is
    still computed, by conversion to fp32: a finding, not a reason to skip."""
    units = [words for key, words in (("amx_bf16", "AMX"), ("avx512_bf16", "AVX-512 BF16"))
             if features.get(key)]
    if units:
        return " and ".join(units)
    return "none: bf16 is converted to fp32 for the arithmetic (no native bf16 units)"


def fp16_units(features: dict[str, bool]) -> str:
    """The CPU's fp16 arithmetic units in words (AVX-512 FP16, AMX-FP16), "" without any."""
    return " and ".join(words for key, words in (("amx_fp16", "AMX-FP16"),
                                                 ("avx512_fp16", "AVX-512 FP16"))
                        if features.get(key))


#: Why a CPU without fp16 units has no fp16 cell: its fp16 is converted to fp32 for every
#: operation, which answers nothing about half precision and takes a real-size process far
#: past its time.
NO_FP16_UNITS = ("no fp16 units on this CPU (neither AVX-512 FP16 nor AMX-FP16 in its "
                 "flags): fp16 would be converted to fp32 for every operation")
