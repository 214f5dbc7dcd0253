"""A GPU's arithmetic peaks by device name, as its vendor's datasheet states them.

A GPU cell's bound is its device's datasheet peak at the precision it computes in: fp32 on the
CUDA cores (every framework runs with TF32 off: runner/worker/adapters), bf16 and fp16 on the
tensor cores, dense (a datasheet's larger figure assumes 2:4 structured sparsity, which no
cell uses). The datasheets state the peaks at the GPU's boost clock, the highest it runs at, so
each figure stays a bound. A device not in this table has no bound: nothing is guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuPeak:
    """One GPU's datasheet peaks, the device names that identify it and the datasheet."""

    name: str
    names: str  # a regular expression over the recorded device name (NVML's, upper case)
    fp32_tflops: float  # fp32 on the CUDA cores (not TF32)
    tensor_tflops: float  # bf16 and fp16 on the tensor cores, dense
    datasheet: str


#: The datasheets. The H100 and H200 sheets give the tensor figures "with sparsity" only
#: (1,979 TFLOP/s bf16 on the SXM parts, 1,513 on the H100 PCIe, 1,671 on the NVL parts):
#: dense is half of each. The A100 sheet gives 312 dense (624 with sparsity).
_H100 = "NVIDIA H100 Tensor Core GPU datasheet (2023)"
_H200 = "NVIDIA H200 Tensor Core GPU datasheet (2024)"
_A100 = "NVIDIA A100 Tensor Core GPU datasheet (2021)"

#: Declared peaks, the more specific name first (NVML calls the H100 SXM5 'NVIDIA H100 80GB
#: HBM3' and the H200 SXM 'NVIDIA H200').
GPU_PEAKS = (
    GpuPeak("NVIDIA H100 PCIe", r"\bH100\b.*\bPCIE\b", 51.0, 756.5, _H100),
    GpuPeak("NVIDIA H100 NVL", r"\bH100\b.*\bNVL\b", 60.0, 835.5, _H100),
    GpuPeak("NVIDIA H100 SXM5", r"\bH100\b.*\b(SXM5?|HBM3)\b", 67.0, 989.5, _H100),
    GpuPeak("NVIDIA H200 NVL", r"\bH200\b.*\bNVL\b", 60.0, 835.5, _H200),
    GpuPeak("NVIDIA H200 SXM", r"\bH200\b(?!.*\bNVL\b)", 67.0, 989.5, _H200),
    GpuPeak("NVIDIA A100 (SXM4 or PCIe, 40 or 80 GB)", r"\bA100\b", 19.5, 312.0, _A100),
)

#: What a GPU cell's bound is where its device is not declared.
NOT_IN_TABLE = "no bound: device not in the table"


def gpu_peak_of(model: str) -> GpuPeak | None:
    """The declared peaks of a recorded GPU model name, None where it is not declared."""
    text = str(model or "").upper()
    return next((peak for peak in GPU_PEAKS if re.search(peak.names, text)), None)


def gpu_peak_words(peak: GpuPeak, key: str) -> tuple[float, str]:
    """The FLOP/s of `key` (fp32_flops | bf16_flops) for a declared GPU, and its derivation."""
    if key == "fp32_flops":
        return peak.fp32_tflops * 1e12, (f"{peak.name}: {peak.fp32_tflops:g} TFLOP/s fp32 on "
                                         f"its CUDA cores (TF32 off), {peak.datasheet}")
    return peak.tensor_tflops * 1e12, (f"{peak.name}: {peak.tensor_tflops:g} TFLOP/s bf16 and "
                                       f"fp16 dense on its tensor cores, {peak.datasheet}")
