"""A machine's arithmetic bound: the FLOP/s its cores cannot exceed (a GPU's: its datasheet's
peaks, dlbench.core.machine.gpu_peak).

The bound is cores x the clock the cores sustain under load x the fused multiply-add (FMA)
FLOP per cycle of that core, each factor with its source. The FLOP per cycle is the core's
own (its microarchitecture), not what its instruction-set flags suggest: AMD's Zen 4 decodes
AVX-512 but executes a 512-bit FMA as two 256-bit halves. The clock is the one measured on
every usable core (runner: dlbench.runner.driver.machine.clock); a run that recorded none is
bounded by the highest clock documented for its core, so the figure stays a bound. It is never
derived from the rates a run achieved: a cell or probe above it is a defect to investigate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dlbench.core.machine.gpu_peak import NOT_IN_TABLE, gpu_peak_of, gpu_peak_words


@dataclass(frozen=True)
class Core:
    """A CPU core's arithmetic per cycle and the highest clock documented for it."""

    name: str
    fp32_flop_per_cycle: int
    fp32_why: str
    bf16_flop_per_cycle: int
    bf16_why: str
    documented_ghz: float | None = None
    documented_part: str = ""


_TWO_512 = "two 512-bit FMA units x 16 fp32 lanes x 2 FLOP"
_TWO_256 = "two 256-bit FMA units x 8 fp32 lanes x 2 FLOP"
_AMX = "AMX tile multiply: 1,024 bf16 FLOP per cycle"
_NO_BF16 = "no bf16 units: bf16 is converted and computed in fp32"

#: Intel cores with AMX-BF16 but no AMX-FP16: Sapphire Rapids and Emerald Rapids Xeons.
INTEL_AMX = Core("Intel Sapphire/Emerald Rapids (AMX)", 64, _TWO_512, 1024, _AMX, 4.1,
                 "Xeon Gold 6434 and 6544Y, max turbo 4.1 GHz")
INTEL_AVX512 = Core("Intel Xeon with AVX-512", 64,
                    _TWO_512 + " (Xeon Gold/Platinum; a one-unit part peaks lower)",
                    64, _NO_BF16)
INTEL_AVX512_BF16 = Core("Intel Xeon with AVX-512 BF16", 64, _TWO_512, 128,
                         "two units x 32 bf16 pairs (VDPBF16PS) x 2 FLOP")
AVX2 = Core("x86-64 with AVX2", 32, _TWO_256, 32, _NO_BF16)
ZEN1 = Core("AMD Zen/Zen+ (family 23, models 0-47)", 16,
            "two 128-bit FMA units x 4 fp32 lanes x 2 FLOP (256-bit work in two halves)",
            16, _NO_BF16, 3.8, "EPYC 7371, max boost 3.8 GHz")
ZEN2_3 = Core("AMD Zen 2/Zen 3 (AVX2 only)", 32, _TWO_256, 32, _NO_BF16, 4.1,
              "EPYC 72F3 and 73F3, max boost 4.1 GHz")
ZEN4 = Core("AMD Zen 4 (family 25, Genoa)", 32,
            _TWO_256 + ": a 512-bit FMA runs as two 256-bit halves", 64,
            "one 512-bit VDPBF16PS per cycle (two 256-bit halves): 16 lanes x 2 pairs x 2 FLOP",
            4.4, "EPYC 9174F, max boost 4.4 GHz")
ZEN5 = Core("AMD Zen 5 (family 26)", 64, _TWO_512 + " (a full 512-bit datapath)", 128,
            "two units x 32 bf16 pairs (VDPBF16PS) x 2 FLOP")
NEON = Core("Arm with NEON", 32, "4 FMA units x 4 fp32 lanes x 2 FLOP (the widest Arm cores)",
            32, _NO_BF16)
SSE = Core("x86-64 without AVX", 8, "one 4-lane add and one 4-lane multiply per cycle", 8,
           _NO_BF16)


def vendor_of(cpu: Mapping) -> str:
    """AMD, Intel or '' from a run's cpu record (older records name it only in the model)."""
    text = f"{cpu.get('vendor') or ''} {cpu.get('model') or ''}"
    return "AMD" if "AMD" in text else "Intel" if "Intel" in text else ""


def core_of(cpu: Mapping) -> Core:
    """The core of a run's cpu record, by vendor, family and model where recorded, else by
    the features only that core has (Zen 5 added AVX-VNNI to Zen 4's AVX-512). Records before
    2027.04 hold no avx2 key (an x86-64 one is taken to have it: the wider unit keeps the
    figure a bound) and name AMX only as a whole."""
    vendor, family, model = vendor_of(cpu), cpu.get("family"), cpu.get("model_number")
    x86 = str(cpu.get("arch") or "").upper() in ("X86_64", "AMD64")
    avx2 = cpu.get("avx2", x86)
    if vendor == "AMD" and avx2:
        if family == 26 or (family is None and cpu.get("avx512f") and cpu.get("avx_vnni")):
            return ZEN5
        if cpu.get("avx512f"):
            return ZEN4
        if family == 23 and model is not None and model < 48:
            return ZEN1
        return ZEN2_3
    if vendor == "Intel" and cpu.get("avx512f"):
        if cpu.get("amx_bf16", cpu.get("amx")) and not cpu.get("amx_fp16"):
            return INTEL_AMX
        return INTEL_AVX512_BF16 if cpu.get("avx512_bf16") else INTEL_AVX512
    if avx2:
        return AVX2
    return NEON if cpu.get("neon") else SSE


@dataclass(frozen=True)
class Bound:
    """The FLOP/s a machine's cores cannot exceed at one precision, and how it was derived."""

    flops: float
    derivation: str


def bound_of(cpu: Mapping, clock: Mapping | None, key: str) -> Bound | None:
    """The bound of `key` (fp32_flops | bf16_flops) from a run's cpu record and its measured
    clock (None: the core's highest documented clock); None where neither clock is known."""
    core, cores = core_of(cpu), int(cpu.get("usable_cores") or cpu.get("logical_cores") or 0)
    per_cycle, why = ((core.fp32_flop_per_cycle, core.fp32_why) if key == "fp32_flops"
                      else (core.bf16_flop_per_cycle, core.bf16_why))
    ghz = float((clock or {}).get("ghz") or 0)
    if ghz > 0:
        method = clock.get("method") or "method not recorded"
        clock_words = f"{ghz:.2f} GHz measured under load ({method})"
    elif core.documented_ghz:
        ghz = core.documented_ghz
        missing = (clock or {}).get("why") or "this run measured no clock"
        clock_words = (f"{ghz} GHz, the highest clock documented for this core "
                       f"({core.documented_part}; {missing})")
    else:
        return None
    if not cores:
        return None
    return Bound(cores * ghz * 1e9 * per_cycle,
                 f"{cores} cores x {clock_words} x {per_cycle} FLOP per cycle per core "
                 f"({core.name}: {why})")


def environment_bound(environment: Mapping, key: str, device: str = "cpu") -> Bound | None:
    """A run's bound of `key` on `device`, from its environment record: a CPU's from its
    cores (a CPU run's only: a GPU machine records its GPU's probe), a GPU's from its
    datasheet (gpu_bound)."""
    if device == "cuda":
        return gpu_bound(environment.get("gpus") or [], key)
    if environment.get("gpus") or not environment.get("cpu"):
        return None
    peak = environment.get("compute_peak") or {}
    return bound_of(environment["cpu"], peak.get("clock"), key)


def gpu_bound(gpus: Sequence[Mapping], key: str) -> Bound | None:
    """The bound of `key` on a run's GPU (a cell runs on GPU 0): its declared datasheet peak
    (dlbench.core.machine.gpu_peak), None for a device not declared (bound_words says so)."""
    peak = gpu_peak_of(str((gpus[0] if gpus else {}).get("model") or ""))
    return Bound(*gpu_peak_words(peak, key)) if peak else None


def bound_words(environment: Mapping, key: str, device: str = "cpu") -> str:
    """How a run's bound of `key` on `device` was derived, or why it has none."""
    bound = environment_bound(environment, key, device)
    if bound:
        return bound.derivation
    if device == "cuda":
        model = str(((environment.get("gpus") or [{}])[0]).get("model") or "not recorded")
        return f"{NOT_IN_TABLE} ({model})"
    return "no clock or core known: no bound"


#: What a convolutional cell's rate counts, in words: a Winograd convolution is not credited.
WINOGRAD_WORDS = ("FLOPs counted as direct convolutions; a 3x3 convolution computed with "
                  "Winograd does fewer multiply-adds than counted, so this rate may exceed the "
                  "arithmetic the machine did")

#: What a rate above its machine's bound is, on a page.
ABOVE_BOUND_WORDS = ("a defect to investigate: more than the machine can compute (a wrong "
                     "FLOP count, clock or FMA width)")


def measured_fp32_flops(compute_peak: Mapping | None) -> float | None:
    """A run's measured fp32 matmul rate, what tells two machines apart: its best probe
    (a record since 2026-12-06 holds the theoretical peak in fp32_flops), else the
    fp32_flops an older record (or a GPU's) measured."""
    record = compute_peak or {}
    probes = [float(value) for name, value in (record.get("probes") or {}).items()
              if name.endswith("fp32_flops") and value]
    if probes:
        return max(probes)
    if record.get("theoretical") or record.get("clock"):
        return None
    return float(record["fp32_flops"]) if record.get("fp32_flops") else None
