"""How fast this machine gives a process memory it has not touched: the first-touch rate, read
by the driver just before every worker process.

Found on the AMD EPYC kind of release 2027.04 (a KVM guest with a virtio balloon): memory the
guest has not used lately is not backed by the host, and a first touch of it runs at 0.36-0.9
GiB/s, against 3.5-7.5 GiB/s for memory the guest touched moments before; memory the guest
frees goes back to the host within a minute (free page reporting), so the slow state returns
after any pause and is worst right after the machine starts (measured with
benchmarks/memory_backing.py, alone on the machine). A framework that allocates fresh memory
in its timed steps runs slow while the host backs it: the candidate cause of that run's
processes 2.6x slower than their cell's best, clustered in its first minutes. The reading is
recorded per process (processes table, `fresh_memory_gibs`) so a release can tell such
processes from the others.
"""

from __future__ import annotations

import time

import numpy as np

#: How much fresh memory the probe touches: enough pages that one slow fault does not decide
#: the rate, little enough to cost at most a third of a second in the slow state.
PROBE_MIB = 128
PAGE_BYTES = 4096


def fresh_memory_rate(mib: int = PROBE_MIB) -> float:
    """GiB/s at which a new allocation of `mib` MiB is touched for the first time, one write
    per page (the kernel's and the host's cost of handing the pages over, not a copy)."""
    size = mib * 2**20
    block = np.empty(size, dtype=np.uint8)  # large: mapped fresh, untouched
    begin = time.perf_counter()
    block[::PAGE_BYTES] = 1
    seconds = time.perf_counter() - begin
    del block
    return round(size / 2**30 / max(seconds, 1e-9), 3)
