"""Where `make test` spends its time, from a `pytest --durations=0` log: the seconds of each
module and of each scheduling group (tests/conftest.py's SHARED_BUILD_MODULES run as one),
the total worker-seconds, and the wall time of the groups replayed on N test processes the
way tests/conftest.py's scheduler hands them out (the longest group first, each process
taking the next group when it is free).

The replay leaves out what the log does not hold (start-up, collection, hidden durations under
5 ms), so the real wall time is somewhat longer; it is an estimate to compare changes by, not a
measurement.

Run: .venv/bin/python benchmarks/test_time_profile.py LOG [--collected COLLECT] [--workers 3]
[--minus MODULE=SECONDS ...] [--write tests/group_seconds.json]
(COLLECT: the output of `pytest --collect-only -q`, for each group's test count; without it
the tests the log names are counted. --minus: an estimate of a change, seconds taken off a
module before the sums and the replay. --write: each group's seconds, which the test
scheduler reads to start the longest groups first.) Prints the tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import heapq
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's tests/
from tests.conftest import SHARED_BUILD_MODULES  # noqa: E402

#: One duration line: "12.34s call     tests/test_x.py::test_y[p]".
DURATION = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+(tests/\S+?\.py)(::\S.*)?$",
                      re.MULTILINE)
#: One collected test of `pytest --collect-only -q`.
COLLECTED = re.compile(r"^(tests/\S+?\.py)::", re.MULTILINE)


def group_of(module: str) -> str:
    """The scheduling unit of a module: its shared build, or the module itself."""
    return SHARED_BUILD_MODULES.get(module, module)


def module_seconds(log: str) -> dict[str, dict[str, float]]:
    """Seconds per module and phase (setup, call, teardown) in a --durations=0 log."""
    seconds: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for value, phase, module, _ in DURATION.findall(log):
        seconds[module][phase] += float(value)
    return seconds


def test_counts(text: str) -> Counter:
    """Tests per scheduling group in a collect-only listing (or a log's test ids)."""
    ids = set(re.findall(r"(?:^|\s)(tests/\S+?\.py::\S+)", text, re.MULTILINE))
    return Counter(group_of(test.split("::", 1)[0]) for test in ids)


def replay(groups: dict[str, float], workers: int) -> tuple[float, list]:
    """The wall seconds of `groups` on `workers` processes in the test scheduler's order
    (tests/conftest.py: the longest first, by these same seconds), and each process's
    groups."""
    order = sorted(groups, key=lambda name: -groups[name])
    free = [(0.0, worker) for worker in range(workers)]
    taken: list[list[str]] = [[] for _ in range(workers)]
    for name in order:
        at, worker = heapq.heappop(free)
        taken[worker].append(name)
        heapq.heappush(free, (at + groups[name], worker))
    return max(at for at, _ in free), taken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--collected", type=Path)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--minus", action="append", default=[], metavar="MODULE=SECONDS")
    parser.add_argument("--write", type=Path, metavar="FILE")
    options = parser.parse_args()
    log = options.log.read_text()
    modules = module_seconds(log)
    for change in options.minus:
        module, _, seconds = change.partition("=")
        modules[module]["call"] -= float(seconds)
    groups: dict[str, float] = defaultdict(float)
    for module, phases in modules.items():
        groups[group_of(module)] += sum(phases.values())
    counts = test_counts(options.collected.read_text() if options.collected else log)
    total = sum(groups.values())
    print(f"{'seconds':>8} {'setup':>7} {'call':>7} {'tear':>6}  module")
    for module, phases in sorted(modules.items(), key=lambda m: -sum(m[1].values()))[:options.top]:
        print(f"{sum(phases.values()):8.1f} {phases['setup']:7.1f} {phases['call']:7.1f} "
              f"{phases['teardown']:6.1f}  {module}")
    print(f"\n{'seconds':>8} {'tests':>5}  group")
    for name, value in sorted(groups.items(), key=lambda g: -g[1])[:10]:
        print(f"{value:8.1f} {counts.get(name, 0):5d}  {name}")
    wall, taken = replay(groups, options.workers)
    print(f"\ntotal {total:.0f} worker-seconds ({total / 60:.1f} min) in {len(groups)} groups; "
          f"longest group {max(groups.values()):.0f} s; replayed on {options.workers} "
          f"processes: {wall:.0f} s ({wall / 60:.1f} min) without start-up and collection")
    for worker, names in enumerate(taken):
        print(f"  process {worker}: {sum(groups[n] for n in names):.0f} s, last "
              f"{names[-1] if names else '-'}")
    if options.write:
        ordered = dict(sorted(((name, round(value, 1)) for name, value in groups.items()),
                              key=lambda item: -item[1]))
        options.write.write_text(json.dumps(ordered, indent=1) + "\n")


if __name__ == "__main__":
    main()
