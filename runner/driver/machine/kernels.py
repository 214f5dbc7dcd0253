"""What decides the frameworks' kernels on this CPU: the instruction-set features they switch
on (read from the CPU's flags: dlbench.core.cpu_flags), and each framework's own choice
where it records one.

Frameworks choose kernels by the CPU's instruction set: TensorFlow turns its oneDNN custom
operations on only with AVX-512 VNNI/BF16, AVX-VNNI or AMX; bf16 is native only with
AVX-512 BF16 or AMX; OpenVINO's CPU plugin defaults to bf16 where it is native. The
frameworks' choices are read in child processes (one per framework), so the driver never
imports a framework, the same way compute_peak reads a GPU.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

#: Where the CPU flags are named by the vendor string cpuinfo reads.
VENDORS = {"GenuineIntel": "Intel", "AuthenticAMD": "AMD", "ARM": "ARM", "Apple": "Apple"}


def vendor_name(vendor_id: str) -> str:
    """The CPU's vendor in words (cpuinfo's vendor_id_raw), or the raw id when unknown."""
    return VENDORS.get(vendor_id, vendor_id or "unknown")


#: Each framework's probe: prints one JSON object of its kernel choices on this CPU.
PROBES = {
    "tensorflow": """
import json, tensorflow as tf
from tensorflow.python.util import _pywrap_util_port
print(json.dumps({"version": tf.__version__,
                  "onednn_custom_ops": bool(_pywrap_util_port.IsMklEnabled())}))
""",
    "torch": """
import json, torch
bf16 = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: None)()
print(json.dumps({"version": torch.__version__,
                  "cpu_capability": torch.backends.cpu.get_cpu_capability(),
                  "mkldnn": torch.backends.mkldnn.is_available(),
                  "onednn_bf16_supported": bf16}))
""",
    "openvino": """
import json, openvino
core = openvino.Core()
hint = core.get_property("CPU", "INFERENCE_PRECISION_HINT")
print(json.dumps({"version": openvino.__version__,
                  "default_inference_precision": hint.to_string(),
                  "capabilities": list(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"))}))
""",
}


def framework_kernels(timeout_s: float = 120.0) -> dict[str, dict]:
    """Each framework's own kernel choice on this CPU, read in its own child process (the
    three at once) under the cell's defaults (TensorFlow's oneDNN default:
    TF_ENABLE_ONEDNN_OPTS unset); a framework that cannot be read gives {"error": why}.
    Read once per process: the CPU does not change under it."""
    return json.loads(_framework_kernels_json(timeout_s))


@functools.cache
def _framework_kernels_json(timeout_s: float) -> str:
    env = {k: v for k, v in os.environ.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
    env |= {"TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    started = {}
    for name, code in PROBES.items():
        try:
            started[name] = subprocess.Popen([sys.executable, "-c", code], env=env, text=True,
                                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as error:
            started[name] = error
    return json.dumps({name: _answer(child, timeout_s) for name, child in started.items()})


def _answer(child: subprocess.Popen | OSError, timeout_s: float) -> dict:
    """One probe's JSON, or {"error": ...} naming why it gave none."""
    if isinstance(child, OSError):
        return {"error": type(child).__name__}
    try:
        stdout, stderr = child.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return {"error": f"no answer in {timeout_s:g} s"}
    lines = stdout.strip().splitlines()
    if child.returncode != 0 or not lines:
        last = (stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": "not installed" if "ModuleNotFoundError" in last else last[:200]}
    try:
        return json.loads(lines[-1])
    except ValueError:
        return {"error": f"unreadable probe output: {lines[-1][:200]}"}
