"""Measurement, in two sides that meet only through the cell (runner/cell/: the spec a worker
is given and the outcome it writes back, as JSON, and the environment it runs under).

- driver/ (the parent process): plans cells, launches one worker process per cell, reads
  the machine, stores the records and runs the commands (and a cluster's dispatch).
- worker/ (the measured process): the entry point, the harness and its measurement, the
  code record, the adapters and each experiment's framework code.
- cell/, workloads/ and models/ are the ground both read: the format, and what a spec names
  (the workload catalog and the model families the planner sizes and the worker builds).

No driver module imports a worker module nor the reverse (tests/test_imports.py); what a
worker process imports is what its code record holds (worker/harness/code_record.py)."""

from pathlib import Path

#: The project's root, the one owner of it: found from this package, wherever a module lives.
PROJECT_ROOT = Path(__file__).resolve().parent.parent
