"""A CPU's theoretical arithmetic peak, and the peak a run's regime divides by.

The theoretical peak is cores x clock x FLOP per cycle of the CPU's widest fused multiply-add
(FMA), each factor recorded with the assumption behind it. The peak a regime divides by is the
largest of that figure, the run's matrix-multiply probes and every rate a cell achieved in the
run, so no cell can show more than 100% of it, and the record says which of them set it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: FMA units per core assumed for each vector width: two, as on Intel's server cores
#: (Skylake-SP Gold/Platinum and later) and AMD Zen; a part with one (some Xeon Silver) or
#: that splits 512-bit work in two halves (Zen 4) peaks lower, so the figure stays a bound.
FMA_UNITS = 2

#: AMX's tile multiply unit: bf16 FLOP per cycle per core (Intel: 1,024 bf16 FLOP, that is
#: 512 multiply-adds, per cycle per core on Sapphire Rapids).
AMX_BF16_FLOP_PER_CYCLE = 1024


@dataclass(frozen=True)
class VectorUnit:
    """The widest arithmetic a CPU's flags promise for one precision, per cycle per core."""

    name: str
    flop_per_cycle: int
    why: str


def fp32_unit(flags: set[str]) -> VectorUnit:
    """The widest fp32 FMA the CPU flags show, and its FLOP per cycle per core."""
    if "avx512f" in flags:
        return VectorUnit("AVX-512 FMA", FMA_UNITS * 16 * 2,
                          f"{FMA_UNITS} FMA units x 16 fp32 lanes x 2 FLOP (multiply and add)")
    if "fma" in flags and "avx2" in flags:
        return VectorUnit("AVX2 FMA", FMA_UNITS * 8 * 2,
                          f"{FMA_UNITS} FMA units x 8 fp32 lanes x 2 FLOP (multiply and add)")
    if "avx" in flags:
        return VectorUnit("AVX (no FMA)", 16, "one 8-lane add and one 8-lane multiply per cycle")
    if "asimd" in flags or "neon" in flags:
        return VectorUnit("NEON FMA", 4 * 4 * 2,
                          "4 FMA units x 4 fp32 lanes x 2 FLOP (the widest Arm cores' count)")
    return VectorUnit("SSE", 8, "one 4-lane add and one 4-lane multiply per cycle")


def bf16_unit(flags: set[str], fp32: VectorUnit) -> VectorUnit:
    """The widest bf16 arithmetic the CPU flags show: AMX tiles, AVX-512 BF16 dot products,
    or none (bf16 is then computed in fp32 and peaks at the fp32 rate)."""
    if "amx_bf16" in flags or "amx" in flags:
        return VectorUnit("AMX tiles", AMX_BF16_FLOP_PER_CYCLE,
                          f"AMX tile multiply: {AMX_BF16_FLOP_PER_CYCLE} bf16 FLOP per cycle "
                          "per core")
    if "avx512_bf16" in flags:
        return VectorUnit("AVX-512 BF16 dot products", FMA_UNITS * 32 * 2,
                          f"{FMA_UNITS} units x 32 bf16 pairs (VDPBF16PS) x 2 FLOP")
    return VectorUnit(f"none ({fp32.name} on fp32)", fp32.flop_per_cycle,
                      "no bf16 units: bf16 is converted and computed in fp32")


@dataclass(frozen=True)
class Clock:
    """A core clock in GHz, where it was read, and whether it is the maximum (turbo) clock."""

    ghz: float
    source: str
    is_maximum: bool


def theoretical_peak(flags: Iterable[str], cores: int, clock: Clock | None) -> dict:
    """The CPU's theoretical fp32 and bf16 FMA peak with each assumption as data; the FLOP/s
    are None where no clock is known."""
    flags = {f.lower() for f in flags}
    fp32 = fp32_unit(flags)
    bf16 = bf16_unit(flags, fp32)
    record = {
        "cores": cores,
        "cores_assumption": "usable logical cores, each counted with FMA units of its own "
                            "(SMT siblings share theirs, so this is an upper bound)",
        "fp32_unit": fp32.name, "fp32_flop_per_cycle": fp32.flop_per_cycle,
        "fp32_unit_assumption": fp32.why,
        "bf16_unit": bf16.name, "bf16_flop_per_cycle": bf16.flop_per_cycle,
        "bf16_unit_assumption": bf16.why,
        "clock_ghz": clock.ghz if clock else None,
        "clock_source": clock.source if clock else "no clock could be read",
        "clock_assumption": _clock_words(clock),
        "fp32_flops": None, "bf16_flops": None,
    }
    if clock and clock.ghz > 0:
        record["fp32_flops"] = cores * clock.ghz * 1e9 * fp32.flop_per_cycle
        record["bf16_flops"] = cores * clock.ghz * 1e9 * bf16.flop_per_cycle
    return record


def _clock_words(clock: Clock | None) -> str:
    if clock is None:
        return ("no clock known: no theoretical figure; the peak is the largest of the probes "
                "and the rates achieved in the run")
    if clock.is_maximum:
        return "the maximum (turbo) clock, held on every core at once"
    return ("only a nominal clock is known: a turbo clock above it would give a higher "
            "theoretical peak, so the peak is never taken below the probes or any rate "
            "achieved in the run")


@dataclass(frozen=True)
class PeakReading:
    """The peak one run's cells of one precision are divided by, and what set it."""

    flops: float
    basis: str


def run_peak(recorded: Mapping, key: str, achieved: Mapping[str, float],
             notes: Mapping[str, str] | None = None) -> PeakReading | None:
    """The largest of the recorded peak (theoretical and probes) for `key` and every rate
    achieved in the run (cell -> FLOP/s), naming which set it; None where neither is known."""
    candidates = []
    if recorded.get(key):
        basis = recorded.get(f"{key}_basis") or recorded.get("probe") or "recorded peak"
        candidates.append((float(recorded[key]), str(basis)))
    for cell, rate in achieved.items():
        if rate and math.isfinite(rate):
            why = f"rate achieved by cell {cell}, above the recorded peak"
            note = (notes or {}).get(cell)
            candidates.append((float(rate), f"{why} ({note})" if note else why))
    if not candidates:
        return None
    flops, basis = max(candidates, key=lambda c: c[0])
    return PeakReading(flops, basis)


#: What a convolutional cell's rate counts, in words: a Winograd convolution is not credited.
WINOGRAD_WORDS = ("FLOPs counted as direct convolutions; a 3x3 convolution computed with "
                  "Winograd does fewer multiply-adds than counted, so this rate may exceed the "
                  "arithmetic the machine did")


def measured_fp32_flops(compute_peak: Mapping | None) -> float | None:
    """A run's measured fp32 matmul rate, what tells two machines apart: its best probe
    (a record since 2026-12-06 holds the theoretical peak in fp32_flops), else the
    fp32_flops an older record (or a GPU's) measured."""
    record = compute_peak or {}
    probes = [float(value) for name, value in (record.get("probes") or {}).items()
              if name.endswith("fp32_flops") and value]
    if probes:
        return max(probes)
    if record.get("theoretical"):
        return None
    return float(record["fp32_flops"]) if record.get("fp32_flops") else None
