"""A cell's identity: what it measures, as a short hash beside the readable cell ID.

The cell ID (`training:mlp-digits:pytorch:fp32-default-b32:cpu`) names a cell for people; it
does not say how big the measurement was. Two runs may hold the same cell ID measured with
other sizes (the quick suite trains fewer epochs on fewer samples), so comparing them by ID
alone divides two different experiments. The configuration ID hashes every field of the
cell's recorded configuration (its `config_json`) that changes what is measured: workload
and its size parameters, sample and epoch counts, timing windows, batch size, mode,
precision, device kind and every experiment parameter. Left out, because they change how a
cell is run but not what one repeat measures: which repeat a process is, how many repeats,
the timeout, the data directory's path and the thread count (the machine's, shown apart as
environment). The parameters of a retired adaptive repeat policy (max_repeats, target_ci),
which nothing writes any more but release 2026.12's training cells still carry, are left out
too, so those cells keep the IDs they were published with.

A field whose value is empty (None, "", {}, []) is left out too, so a field added to the
configuration later with an empty default keeps the IDs of older results.
"""

from __future__ import annotations

import hashlib
import json

#: Configuration fields that do not change what a cell measures.
NOT_IDENTITY = frozenset({"repeat_index", "repeats", "timeout_s", "data_dir", "threads",
                          "run_id"})
#: Experiment parameters (config "params") of the retired adaptive repeat policy: written by no
#: code now, read in release 2026.12's cells; they decided how many repeats, not what one
#: measures.
RETIRED_PARAMS = frozenset({"max_repeats", "target_ci"})
CONFIG_ID_LENGTH = 10


def _is_empty(value: object) -> bool:
    return value is None or value == "" or value == {} or value == []


def canonical_config(config_json: str) -> dict:
    """The fields of a cell's configuration that change what it measures."""
    config = json.loads(config_json)
    params = config.get("params") or {}
    config["params"] = {key: value for key, value in params.items()
                        if key not in RETIRED_PARAMS}
    return {key: value for key, value in sorted(config.items())
            if key not in NOT_IDENTITY and not _is_empty(value)}


def config_id(config_json: str) -> str:
    """A short, stable hash of a cell's canonical configuration."""
    text = json.dumps(canonical_config(config_json), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:CONFIG_ID_LENGTH]


def _flat(value: object, prefix: str = "") -> dict[str, object]:
    if isinstance(value, dict):
        flat: dict[str, object] = {}
        for key in sorted(value):
            flat |= _flat(value[key], f"{prefix}{key}.")
        return flat
    return {prefix.rstrip("."): value}


def config_differences(a_json: str, b_json: str) -> list[tuple[str, object, object]]:
    """(parameter, value in A, value in B) for every measured parameter that differs."""
    a, b = _flat(canonical_config(a_json)), _flat(canonical_config(b_json))
    return [(key, a.get(key), b.get(key)) for key in sorted(set(a) | set(b))
            if a.get(key) != b.get(key)]


def differences_text(differences: list[tuple[str, object, object]]) -> str:
    """Differences as one short line, e.g. 'params.epochs 2→8, params.data_size 512→2048'."""
    def shown(value: object) -> str:
        return "—" if value is None else json.dumps(value) if isinstance(value, list) else str(value)

    return ", ".join(f"{key} {shown(a)}→{shown(b)}" for key, a, b in differences)
