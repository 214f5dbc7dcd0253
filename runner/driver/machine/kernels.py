"""What decides the frameworks' kernels on this CPU: the instruction-set features they switch
on (read from the CPU's flags: dlbench.core.machine.cpu_flags), and each framework's own choice
where it records one.

Frameworks choose kernels by the CPU's instruction set: TensorFlow turns its oneDNN custom
operations on only with AVX-512 VNNI/BF16, AVX-VNNI or AMX; bf16 is native only with
AVX-512 BF16 or AMX; OpenVINO's CPU plugin defaults to bf16 where it is native. The
frameworks' choices are read in child processes (one per framework), so the driver never
imports a framework, the same way compute_peak reads a GPU.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import importlib.util
import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path

from dlbench.core.storage.atomic import atomic_write_json
from dlbench.core.machine.cpu_flags import cpu_flags
from dlbench.core.text.errors import SaveError

#: Where the CPU flags are named by the vendor string cpuinfo reads.
VENDORS = {"GenuineIntel": "Intel", "AuthenticAMD": "AMD", "ARM": "ARM", "Apple": "Apple"}


#: What the environment record reads of py-cpuinfo's record (its clock varies by the call).
CPU_INFO_KEYS = ("vendor_id_raw", "brand_raw", "arch", "flags", "family", "model")


@functools.cache
def cpu_info() -> dict:
    """py-cpuinfo's vendor, model, architecture and flags of this CPU, read once per process
    (py-cpuinfo starts a child process each time: about a second; the CPU does not change
    under a run); where PROBE_CACHE names a folder, once per CPU and py-cpuinfo there."""
    folder = os.environ.get(PROBE_CACHE)
    if not folder:
        return _read_cpu_info()
    facts = {"cpu": cpu_identity(), "py-cpuinfo": _version("py-cpuinfo")}
    return kept_answer(Path(folder), f"cpuinfo-{probe_key(facts)}", _read_cpu_info,
                       keep=lambda info: bool(info.get("flags")))


def _read_cpu_info() -> dict:
    import cpuinfo

    info = cpuinfo.get_cpu_info()
    return {key: info[key] for key in CPU_INFO_KEYS if key in info}


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


#: A folder keeping each probe answer (the frameworks' kernel choices; the CPU peak:
#: peak.kept_cpu_peak) under the key of what decides it (probe_key), for processes that start
#: many runs on one machine (the test session sets it: tests/conftest.py); unset, every process
#: probes.
PROBE_CACHE = "DLBENCH_PROBE_CACHE"
#: The environment variables that can steer a framework's kernels or which install it imports.
KERNEL_VARIABLE_PREFIXES = ("ATEN_", "DNNL_", "ONEDNN_", "MKL", "KMP_", "OMP_", "TF_", "OV_",
                            "OPENVINO", "TORCH", "PYTORCH", "XLA", "LD_", "PYTHON")
#: Set by the probes themselves, so they decide nothing.
PROBE_VARIABLES = {"TF_ENABLE_ONEDNN_OPTS": None, "TF_CPP_MIN_LOG_LEVEL": "3",
                   "CUDA_VISIBLE_DEVICES": ""}
#: The distributions a probe's module may come from, by probe.
PROBED_DISTRIBUTIONS = {"tensorflow": ("tensorflow", "tensorflow-cpu", "tensorflow-intel"),
                        "torch": ("torch",), "openvino": ("openvino",)}


def framework_kernels(timeout_s: float = 120.0) -> dict[str, dict]:
    """Each framework's own kernel choice on this CPU, read in its own child process (the
    three at once) under the cell's defaults (TensorFlow's oneDNN default:
    TF_ENABLE_ONEDNN_OPTS unset); a framework that cannot be read gives {"error": why}.
    Read once per process: the CPU does not change under it; where PROBE_CACHE names a
    folder, read once per probe_key."""
    return json.loads(_framework_kernels_json(timeout_s))


@functools.cache
def _framework_kernels_json(timeout_s: float) -> str:
    probe = functools.partial(_probe_frameworks, timeout_s)
    return json.dumps(kernel_choices(os.environ.get(PROBE_CACHE), probe))


def kernel_choices(folder: str | None, probe: Callable[[], dict]) -> dict:
    """probe()'s answer, or where `folder` is given the one kept there under this machine's
    probe_key (probed and kept when there is none)."""
    if not folder:
        return probe()
    return kept_answer(Path(folder), probe_key(decisive_facts()), probe)


def decisive_facts() -> dict:
    """What decides the probes' answers: this Python, each probed framework's installed
    version and files, the CPU, the variables that steer kernels, and the probes' code."""
    frameworks = {}
    for name, distributions in PROBED_DISTRIBUTIONS.items():
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec and spec.origin else None
        frameworks[name] = {"origin": origin,
                            "changed_ns": os.stat(origin).st_mtime_ns if origin else None,
                            "versions": {d: _version(d) for d in distributions}}
    variables = {k: v for k, v in os.environ.items()
                 if k.startswith(KERNEL_VARIABLE_PREFIXES) and k not in PROBE_VARIABLES}
    return {"python": [sys.executable, sys.version], "frameworks": frameworks,
            "cpu": cpu_identity(),
            "variables": dict(sorted(variables.items())), "probes": PROBES}


def cpu_identity() -> list:
    """The CPU as the probes' keys name it: the architecture, /proc/cpuinfo's model line and
    the CPU's flags."""
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = next((row for row in cpuinfo.splitlines() if row.startswith("model name")), "")
    return [platform.machine(), model, sorted(cpu_flags())]


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def probe_key(facts: dict) -> str:
    """The key of a probe answer: a hash of every decisive fact, so a changed one re-probes."""
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:32]


def kept_answer(folder: Path, key: str, probe: Callable[[], dict],
                keep: Callable[[dict], bool] | None = None) -> dict:
    """The answer kept in `folder` under `key`, else probe()'s, kept there for the next
    process when it is whole: by default when no framework failed to answer (a timeout under
    load is not the machine's); `keep` says otherwise. Processes starting at once take turns
    (a lock on the folder), so the first probes and the others read its answer."""
    kept = folder / f"probe-{key}.json"
    with _folder_lock(folder):
        try:
            return json.loads(kept.read_text())
        except (OSError, ValueError):
            pass
        answer = probe()
        whole = keep(answer) if keep else not any("error" in c for c in answer.values())
        if whole:  # whole or absent, for processes reading it beside this one
            with contextlib.suppress(SaveError):  # a folder that cannot keep it: probed again
                atomic_write_json(kept, answer)
    return answer


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on `folder` while the block runs; none where it cannot be opened.
    Not re-entrant (a second open of the folder waits on the first): a probe that
    kept_answer runs must not itself read a kept answer of the same folder."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock


def _probe_frameworks(timeout_s: float) -> dict[str, dict]:
    """Each framework's kernel choice, probed now in child processes."""
    env = {k: v for k, v in os.environ.items() if k not in PROBE_VARIABLES}
    env |= {k: v for k, v in PROBE_VARIABLES.items() if v is not None}
    started = {}
    for name, code in PROBES.items():
        try:
            started[name] = subprocess.Popen([sys.executable, "-c", code], env=env, text=True,
                                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as error:
            started[name] = error
    return {name: _answer(child, timeout_s) for name, child in started.items()}


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
