"""Whether an earlier run may be measured further here (`dlbench run --resume`, `--remeasure`):
only on its own machine kind and by the code that measured it, or the run would hold
processes of two machines or two codes under one machine's label."""

from __future__ import annotations

import hashlib
import platform

from dlbench.core.storage import layout
from dlbench.core.machine.cpu_flags import isa_features
from dlbench.core.text.errors import UsageError
from dlbench.core.machine.machines import MachineKind, machine_kind
from dlbench.core.storage.measurement_code import NAMED_FILES, run_code_record
from dlbench.runner import PROJECT_ROOT
from dlbench.runner.driver.machine.kernels import cpu_info, vendor_name
from dlbench.runner.driver.store.run_store import RunStore


def this_machine_cpu() -> dict:
    """The CPU facts of this machine that decide its kind, as a run's environment records
    them (without the frameworks' kernel choices, which take a framework import each)."""
    info = cpu_info()
    return {"vendor": vendor_name(info.get("vendor_id_raw", "")),
            "model": info.get("brand_raw", platform.processor()),
            "arch": info.get("arch", platform.machine()),
            **isa_features(set(info.get("flags", [])))}


def this_machine_kind() -> MachineKind:
    """The machine kind of this machine."""
    return machine_kind({"cpu": this_machine_cpu()})


def refuse_foreign_run(store: RunStore, verb: str = "resumed") -> None:
    """UsageError, in one line, when the run in `store` was recorded on another machine kind
    or by other measurement code than this checkout's."""
    environment = layout.read_environment(store.root)
    if environment.get("cpu"):  # none yet: stopped before it read the machine
        recorded, here = machine_kind(environment), this_machine_kind()
        if recorded.key != here.key:
            raise UsageError(f"run {store.run_id} was recorded on {recorded.words} "
                             f"({recorded.key}); this machine is {here.words} ({here.key}): a "
                             f"run is {verb} only on its own machine kind; start a new run here")
    changed = changed_files(store)
    if changed:
        named = ", ".join(changed[:NAMED_FILES]) + (
            f" and {len(changed) - NAMED_FILES} more" if len(changed) > NAMED_FILES else "")
        raise UsageError(f"run {store.run_id} was measured by other code than this checkout's "
                         f"({named} differ): a run is {verb} only by the code that measured "
                         "it; check out its commit, or start a new run")


def changed_files(store: RunStore) -> list[str]:
    """The project files the run's processes imported that read differently here (or are
    gone), sorted."""
    changed = []
    for relative, hashes in run_code_record(store.root).items():
        path = (PROJECT_ROOT / relative).resolve()
        try:  # a project file only: a record's path may name anything
            inside = path.is_relative_to(PROJECT_ROOT) and path.is_file()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if inside else ""
        except OSError:
            digest = ""
        if digest not in hashes:
            changed.append(relative)
    return changed
