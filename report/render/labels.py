"""Reader's words for modes, precisions, statuses and environment keys: the one owner.

Metric labels live in the metric registry (dlbench.core.declarations.metrics); everything else a
page shows in place of an identifier is named here. Raw identifiers stay in the downloads and the
data dictionary.
"""

from __future__ import annotations

import json
import re

from dlbench.core.declarations.metrics import METRICS
from dlbench.core.declarations.runtimes import runtime_labels
from dlbench.core.declarations.systems import format_words, mode_words
from dlbench.core.text.words import plural

#: Execution modes in a reader's words (the id stays in cell IDs and downloads): the modes
#: every framework shares, then each framework's own (its declaration,
#: dlbench.core.declarations.systems).
MODE_LABELS = {"default": "default mode", "eager": "eager", "one-step": "one step",
               "mixed": "mixed", **mode_words()}
#: Export formats in a reader's words, from each system's declaration.
FORMAT_LABELS = format_words()
#: Settings of a run's environment in a reader's words, with the unit in the label.
ENVIRONMENT_LABELS = {
    "hostname_sha256": "host (hashed name)", "memory_gib": "memory (GiB)",
    "os": "operating system", "platform": "platform", "python": "Python", "gpus": "GPUs",
    "fp32_flops": "fp32 peak (GFLOP/s)", "bf16_flops": "bf16 peak (GFLOP/s)",
    "fp16_flops": "fp16 peak (GFLOP/s)", "probe": "how the peak was measured",
    "theoretical": "theoretical FMA peak", "probes": "matmul probes",
    "fp32_flops_basis": "what set the fp32 peak", "bf16_flops_basis": "what set the bf16 peak",
    "numpy_fp32_flops": "NumPy fp32 (GFLOP/s)", "torch_fp32_flops": "torch fp32 (GFLOP/s)",
    "torch_bf16_flops": "torch bf16 (GFLOP/s)", "clock_ghz": "clock (GHz)",
    "clock": "clock measured under load", "ghz": "clock (GHz)",
    "per_core_ghz": "each core's clock (GHz)", "method": "how it was measured",
    "why": "why it was not measured", "family": "CPU family", "model_number": "CPU model number",
    "fp32_flop_per_cycle": "fp32 FLOP per cycle per core",
    "bf16_flop_per_cycle": "bf16 FLOP per cycle per core",
    "amx": "AMX units", "arch": "architecture", "avx512_bf16": "AVX-512 bf16",
    "avx512f": "AVX-512", "avx512_vnni": "AVX-512 VNNI", "avx_vnni": "AVX-VNNI",
    "logical_cores": "logical cores", "physical_cores": "physical cores",
    "usable_cores": "usable cores", "model": "model", "commit": "commit",
    "dirty": "uncommitted changes", "measurement_code_dirty": "measurement code changed",
    "citable": "citable", "device": "device", "finished_at": "finished (UTC)",
    "started_at": "started (UTC)", "order_seed": "seed of the process order",
    "planned_cells": "cells planned", "process_order": "process order", "run_id": "run",
    "status": "status", "wall_time_s": "wall time (s)", "override": "overridden",
    "preview": "preview", "processes_per_cell": "processes per cell", "suite": "suite",
    "suite_processes": "the suite's processes per cell", "data_dir": "data directory",
    "experiments": "experiments", "frameworks": "frameworks", "plan": "plan",
    "repeats": "processes asked for", "threads": "threads", "timeout_s": "time-out (s)",
    "workloads": "workloads", "at": "when", "cells": "cells", "reason": "reason",
    "single_process_experiments": "experiments measured once", "cpu": "CPU",
    "compute_peak": "compute peak", "environment_variables": "environment variables",
    "git": "git", "packages": "packages", "processes_policy": "processes per cell",
    "remeasured": "re-measured", "request": "what the run was asked for",
    "workload_words": "workloads in words",
}
#: Workloads in a reader's words with their size, per kind of device ("" for the CPU), for
#: runs recorded before a run carried its workloads' words (run.json "workload_words",
#: since 2026-12-05; release 2027.03's run was started just before): a newer run's
#: recorded words come first (`use_recorded_words`), so a new workload needs no entry here.
WORKLOAD_LABELS = {
    "mlp-digits": {"": "MLP, 8x8 digits"}, "cnn-digits": {"": "CNN, 8x8 digits"},
    "cnn-synthetic": {"": "CNN, 32 px"}, "mlp-mnist": {"": "MLP, MNIST"},
    "cnn-cifar10": {"": "CNN, CIFAR-10"},
    "resnet-synthetic": {"": "ResNet-20, 32 px", "cuda": "ResNet-50, 224 px"},
    "resnet-cifar10": {"": "ResNet-20, CIFAR-10"},
    "transformer-tokens": {"": "BERT-mini, seq 128", "cuda": "BERT-base, seq 128"},
    "lstm-tokens": {"": "LSTM 1x256, seq 64", "cuda": "LSTM 2x256, seq 128"},
    "resnet50-synthetic": {"": "ResNet-50, 224 px"}, "bert-base-tokens": {"": "BERT-base, seq 128"},
}
#: The words the runs being rendered recorded, workload -> {device ("" for the CPU): words}.
_recorded: dict[str, dict[str, str]] = {}
#: Groups whose keys are the project's identifiers, each beside its words (a run's
#: workloads in words): shown as code, the way the data dictionary shows identifiers.
IDENTIFIER_GROUPS = ("workload_words",)
#: Groups whose keys are names in their own right (variables, packages, identifiers): kept as
#: they are.
VERBATIM_GROUPS = ("environment_variables", "packages", *IDENTIFIER_GROUPS)
#: Values of a number of FLOP/s shown in GFLOP/s.
GIGA_KEYS = ("fp32_flops", "bf16_flops", "fp16_flops", "numpy_fp32_flops", "torch_fp32_flops",
             "torch_bf16_flops")
#: A Python exception in a reason: the cell crashed, whatever status it was recorded with.
CRASH = re.compile(r"\b(AttributeError|TypeError|NameError|KeyError|IndexError|"
                   r"UnboundLocalError|AssertionError)\b")


def runtime_label(export_format: str) -> str | None:
    """The runtime a contest (the home page's runtime question) names an exported model by
    (dlbench.core.declarations.runtimes), or None."""
    return runtime_labels().get(export_format)


#: A framework's own paths as contenders beside the runtimes: its mode class in words.
PATH_LABELS = {"default": "framework, plain", "fastest": "framework, production"}


def contender_label(contest: str, value: str) -> str:
    """A contender of a question in words: a system, a runtime ('ONNX Runtime'), a
    framework's own path ('framework, production'), a mode class ('plain'), a mode, or a
    worker count ('2 workers')."""
    from dlbench.core.declarations.modes import CLASS_WORDS
    from dlbench.core.storage.schema import system_label

    if contest == "path":
        return PATH_LABELS.get(value) or runtime_label(value) or format_label(value)
    if contest == "export_format":
        return runtime_label(value) or format_label(value)
    if contest == "mode_class":
        return CLASS_WORDS.get(value, value)
    if contest == "mode":
        return mode_label(value)
    if contest == "workers":
        return plural(int(value), "worker")
    return system_label(value)


def mode_label(mode: str) -> str:
    """An execution mode in words, e.g. 'inference_mode' -> 'inference mode'."""
    return MODE_LABELS.get(mode, mode.replace("_", " "))


def use_recorded_words(runs: list[tuple[str, dict]]) -> None:
    """Label workloads by the words these runs recorded, (device, run.json
    "workload_words") each, ahead of WORKLOAD_LABELS; replaces what an earlier build set."""
    _recorded.clear()
    for device, words in runs:
        for workload, text in (words or {}).items():
            _recorded.setdefault(str(workload), {})["" if device == "cpu" else device] = str(text)


def _sizes(workload: str) -> dict[str, str] | None:
    recorded, known = _recorded.get(workload), WORKLOAD_LABELS.get(workload)
    if recorded is None:
        return known
    return {**(known or {}), **recorded}


def known_workloads() -> list[str]:
    """The workloads this build can name in words."""
    return sorted({*WORKLOAD_LABELS, *_recorded})


def workload_label(workload: str, device: str = "") -> str:
    """A workload in words with its size on `device`, e.g. 'ResNet-20, 32 px'; an unknown
    workload by its name's words."""
    sizes = _sizes(workload)
    if not sizes:
        return workload.replace("-", " ").replace("_", " ")
    device = "" if device == "cpu" else device
    return sizes.get(device) or sizes.get("") or next(iter(sizes.values()))


def format_label(export_format: str) -> str:
    """An export format in words, e.g. 'tf_saved_model' -> 'TF SavedModel'."""
    return FORMAT_LABELS.get(export_format, export_format.replace("_", " "))


def environment_key(path: str, group: str = "") -> str:
    """A flattened environment key in words: 'cpu.logical_cores' -> 'logical cores'."""
    if group in VERBATIM_GROUPS:
        return path
    index = re.match(r"\[(\d+)\]\.?", path)
    prefix = f"#{int(index.group(1)) + 1} " if index else ""
    parts = path[index.end() if index else 0:].split(".")
    return prefix + " · ".join(ENVIRONMENT_LABELS.get(p, p.replace("_", " ")) for p in parts)


def environment_value(key: str, value: object, group: str = "") -> str:
    """A recorded environment value for a reader: FLOP/s in GFLOP/s, None as 'not measured',
    booleans as yes/no, an empty setting as 'not set'."""
    leaf = key.rsplit(".", 1)[-1]
    if value is None or value == "None":
        return "not measured" if leaf in GIGA_KEYS else "not recorded"
    if leaf in GIGA_KEYS:
        try:
            return f"{float(value) / 1e9:,.1f}"
        except (TypeError, ValueError):  # '—': not recorded on one side of a comparison
            return str(value)
    if isinstance(value, bool) or value in ("True", "False"):
        return "yes" if value in (True, "True") else "no"
    if value in ("", "(empty)"):
        return "not set" if group == "environment_variables" else "none"
    return str(value)


def status_label(status: str, reason: str) -> str:
    """A cell's status as a reader should take it: a crash is a failure even where the
    run recorded it as unsupported."""
    if status == "unsupported" and CRASH.search(reason or ""):
        return "failed (a crash; recorded as unsupported)"
    return status


#: A Python exception's name followed by its message: what a crash leaves in a reason.
EXCEPTION_NAME = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Exit))\b:")


def reason_label(status: str, reason: str) -> str:
    """A cell's recorded reason as a page shows it, in one line: a crash's raw Python error
    becomes a sentence naming the exception (the full message stays in the downloads' cells
    table)."""
    text = (reason or "").strip()
    if not text:
        return "(none recorded)"
    names = EXCEPTION_NAME.findall(text)
    if status in ("failed", "unsupported") and (names or "Traceback (most recent" in text):
        name = names[-1] if names else "a Python error"
        return (f"the worker process crashed ({name}); the full error is in the cells table "
                f"of the downloads")
    first = mode_ids_in_words(text.splitlines()[0].strip())  # one line; the record keeps all
    return first if len(first) <= 200 else first[:199] + "…"


def cell_words(cell_id: str) -> str:
    """A cell ID's workload and framework in words ('MLP, 8x8 digits, Keras on JAX'); an ID
    of another shape as it is."""
    from dlbench.core.storage.schema import system_label

    parts = cell_id.split(":")
    if len(parts) != 5:
        return cell_id
    _, workload, system, _, device = parts
    return f"{workload_label(workload, device)}, {system_label(system)}"


def cell_id_words(cell_id: str) -> str:
    """A cell ID in words with its variant: 'MLP, 8x8 digits, PyTorch · fp32 · torch.compile
    · batch 1' (an A/A control's twin says so); an ID of another shape as it is."""
    parts = cell_id.split(":")
    if len(parts) != 5:
        return cell_id
    words, tokens = [], re.split(r"-(?=[a-z0-9])", parts[3])
    for index, token in enumerate(tokens):  # a format's own dash joins its two tokens
        if index + 1 < len(tokens) and f"{token}-{tokens[index + 1]}" in FORMAT_LABELS:
            tokens[index + 1], token = f"{token}-{tokens[index + 1]}", ""
        if not token:
            continue
        batch = re.fullmatch(r"b(\d+)", token)
        words.append(f"batch {batch.group(1)}" if batch else "A/A control" if token == "aa"
                     else FORMAT_LABELS.get(token) or MODE_LABELS.get(token)
                     or token.replace("_", " "))
    return " · ".join([cell_words(cell_id), *words])


def mode_ids_in_words(text: str) -> str:
    """Recorded text with each mode identifier that has an underscore ('jit_compile',
    'inference_mode') in words, outside code."""
    names = sorted((m for m in MODE_LABELS if "_" in m), key=len, reverse=True)
    return re.sub(r"(?<![\w`.=])(" + "|".join(map(re.escape, names)) + r")(?![\w`=(])",
                  lambda m: MODE_LABELS[m.group(1)], text)


#: The recorded parameter that holds why a cell is not measured on a device (the runner's
#: cell spec: runner/cell/spec.py NOT_MEASURED), as a compared configuration names it.
NOT_MEASURED_KEY = "params.not_measured"
#: How each recorded reason for not measuring a cell begins
#: (runner/driver/plan/experiments/__init__.py).
NOT_MEASURED_WORDS = "not measured on this device "


def difference_sentence(key: str, a: object, b: object) -> str:
    """One parameter that differs between two sides' configurations of a cell, as a sentence
    ('A and B differ in epochs: 8 in A, 2 in B.'); why a cell is not measured reads as such."""
    if key == NOT_MEASURED_KEY:
        def why(reason: object) -> str:
            return str(reason).removeprefix(NOT_MEASURED_WORDS)
        if a is None:
            return f"Measured in A; {NOT_MEASURED_WORDS}in B: {why(b)}."
        if b is None:
            return f"Measured in B; {NOT_MEASURED_WORDS}in A: {why(a)}."
        return f"Not measured on this device on either side (A: {why(a)}; B: {why(b)})."

    def shown(value: object) -> str:
        return "not set" if value is None else str(value)
    name = key.removeprefix("params.").replace("_", " ").replace(".", " ")
    return f"A and B differ in {name}: {shown(a)} in A, {shown(b)} in B."


def differences_sentences(changes: str) -> str:
    """The parameters a not comparable cell's sides differ in (its `changes`: a JSON list of
    (parameter, value in A, value in B)), as sentences in words."""
    return mode_ids_in_words(" ".join(difference_sentence(str(key), a, b)
                                      for key, a, b in json.loads(changes or "[]")))


#: An API setting in recorded text: 'jit_compile=True', "compile(jit_compile='auto')".
API_SETTING = re.compile(r"(?<![`\w])([A-Za-z_][\w.]*\([^()`]*\)|[a-z_][\w.]*=[\w'.\"]+)")


def settings_as_code(text: str) -> str:
    """Recorded text with its API settings as code ('run_eagerly=False' -> `run_eagerly=False`):
    the exact name a framework documents, shown as code rather than as a word."""
    return API_SETTING.sub(lambda m: f"`{m.group(1)}`", text)


def ids_in_words(text: str) -> str:
    """Generated text with its identifiers in words: 'workload mlp-digits' -> 'MLP, 8x8
    digits', 'system keras-jax' -> 'Keras on JAX', 'batch size 32' -> 'batch 32', metric keys
    by their words."""
    from dlbench.core.storage.schema import system_label
    from dlbench.core.declarations.systems import SYSTEMS

    text = re.sub(r"\bworkload ([a-z0-9][\w-]*)", lambda m: workload_label(m.group(1)), text)
    text = re.sub(r"\bsystem ([a-z][\w-]*)", lambda m: system_label(m.group(1)), text)
    workloads = known_workloads()
    bare = sorted([*workloads, *(s.name for s in SYSTEMS)], key=len, reverse=True)
    text = re.sub(r"(?<![\w./#-])(" + "|".join(map(re.escape, bare)) + r")(?![\w/-])",
                  lambda m: (workload_label(m.group(1)) if m.group(1) in workloads
                             else system_label(m.group(1))), text)
    text = re.sub(r"(?<![\w./#-])([a-z][\w.-]*)/([a-z][\w.-]*)(?![\w/-])",
                  lambda m: "/".join(_name_words(n) for n in m.groups()), text)
    formats = "|".join(map(re.escape, sorted(FORMAT_LABELS, key=len, reverse=True)))
    text = re.sub(r"(?<![\w./#`-])(" + formats + r")(?![\w/`-])",
                  lambda m: runtime_label(m.group(1)) or format_label(m.group(1)), text)
    return metric_ids_in_words(re.sub(r"\bbatch size (\d+)", r"batch \1", text))


def _name_words(name: str) -> str:
    """A system, export format or mode in words; anything else as it is."""
    from dlbench.core.storage.schema import system_label
    from dlbench.core.declarations.systems import SYSTEMS

    if name in {s.name for s in SYSTEMS}:
        return system_label(name)
    return runtime_label(name) or FORMAT_LABELS.get(name) or MODE_LABELS.get(name) or name


def short_sentences(text: str) -> list[str]:
    """A generated explanation of several groups ('a; b; c') as one line per group, each
    in words."""
    return [ids_in_words(part.strip()) for part in text.split("; ") if part.strip()]


def metric_ids_in_words(text: str) -> str:
    """`text` with every registered metric's identifier replaced by its words."""
    names = sorted(METRICS, key=len, reverse=True)
    return re.sub(r"\b(" + "|".join(map(re.escape, names)) + r")\b",
                  lambda match: METRICS[match.group(1)].words, text)
