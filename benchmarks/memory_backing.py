"""Does this machine's host back fresh memory slowly? The first-touch rate of a large block
three ways: the first time (as after a pause), at once again (memory the guest just freed),
and again after an idle pause. Issue 60's slow state on the AMD EPYC kind: 0.36-0.9 GiB/s
cold against 3.5-7.5 GiB/s warm, and cold again after 60 s idle (free page reporting through
the virtio balloon returns freed memory to the host). Each touch runs in a fresh process, as a
worker does. Run it alone on the machine; it measures nothing else.

Run: .venv/bin/python benchmarks/memory_backing.py [--gib 8] [--idle 60]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

_TOUCH = ("import numpy as np, time; n = int({gib} * 2**30); a = np.empty(n, np.uint8); "
          "t = time.perf_counter(); a[::4096] = 1; print(n / 2**30 / (time.perf_counter() - t))")


def first_touch(gib: float) -> float:
    """GiB/s of a first touch of `gib` GiB in a fresh process."""
    done = subprocess.run([sys.executable, "-c", _TOUCH.format(gib=gib)], check=True,
                          capture_output=True, text=True)
    return float(done.stdout)


def balloon_reporting() -> str:
    """Whether the guest has a virtio balloon driver bound (what returns freed memory)."""
    from pathlib import Path

    driver = Path("/sys/bus/virtio/drivers/virtio_balloon")
    bound = [p.name for p in driver.glob("virtio*")] if driver.is_dir() else []
    return f"virtio balloon bound: {', '.join(bound)}" if bound else "no virtio balloon bound"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=8.0)
    parser.add_argument("--idle", type=float, default=60.0)
    options = parser.parse_args()
    print(balloon_reporting())
    cold = first_touch(options.gib)
    warm = first_touch(options.gib)
    time.sleep(options.idle)
    after_idle = first_touch(options.gib)
    print(f"first touch of {options.gib:g} GiB: {cold:.2f} GiB/s; at once again: "
          f"{warm:.2f} GiB/s; after {options.idle:g} s idle: {after_idle:.2f} GiB/s")


if __name__ == "__main__":
    main()
