"""The frameworks (and Keras backends) dlbench measures, as dlbench.core.declarations.systems
declares them, and whether each is installed."""

from __future__ import annotations

import importlib.util

from dlbench.core.declarations.systems import SYSTEMS, by_name
from dlbench.runner.cell.spec import FrameworkId

#: Every declared system, as a cell names it.
FRAMEWORKS: list[FrameworkId] = [FrameworkId(s.framework.name, s.backend) for s in SYSTEMS]

#: Python modules each framework needs before any of its cells can run.
REQUIRED_MODULES: dict[str, tuple[str, ...]] = {s.name: s.required_modules for s in SYSTEMS}


def framework_names() -> list[str]:
    return [f.name for f in FRAMEWORKS]


def select(names: list[str]) -> list[FrameworkId]:
    """Frameworks named on the command line; 'keras' means every Keras backend; none means all."""
    if not names:
        return list(FRAMEWORKS)
    chosen: list[FrameworkId] = []
    for name in names:
        group = ([f for f in FRAMEWORKS if f.framework == "keras"] if name == "keras"
                 else [f for f in FRAMEWORKS if f.name == by_name(name).name])
        chosen.extend(f for f in group if f not in chosen)
    return [f for f in FRAMEWORKS if f in chosen]


def missing_modules(framework: FrameworkId) -> list[str]:
    """The required modules that are not installed (found without importing them); an
    undeclared Keras backend (a user's model on OpenVINO) needs keras and its backend."""
    required = REQUIRED_MODULES.get(framework.name) or (framework.framework, framework.backend)
    return [m for m in required if importlib.util.find_spec(m) is None]
