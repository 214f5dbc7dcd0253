"""The clock the cores sustain under load, measured: a dependent chain of instructions of
known latency, timed on every usable core at once.

Each core runs a loop of CHAIN_LENGTH dependent register adds (one cycle each: every add
waits for the one before) and, as a check, a loop of dependent 64-bit multiplies (three
cycles each on every x86-64 core since Nehalem and Zen), from machine code placed in an
executable page and called through ctypes (which releases the GIL, so the cores run the
loops together, each thread pinned to its core). cycles = iterations x chain length x
latency; clock = cycles / seconds. The best of several trials is kept, since preemption and
steal only ever lower a reading. Scalar code runs at the highest clock the core reaches
(AVX-512 work may run slower), so a bound from this clock stays a bound. The two chains
must agree within CHAINS_AGREE, else no clock is recorded and the reason is.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import platform
import threading
import time

#: Dependent instructions per loop iteration: the loop's own counter and branch run beside
#: the chain on other ports, hidden behind it.
CHAIN_LENGTH = 100
#: x86-64 encodings of one chain link and its latency in cycles.
ADD_RAX_RCX = (b"\x48\x01\xc8", 1)
IMUL_RAX_RCX = (b"\x48\x0f\xaf\xc1", 3)
#: Largest relative difference between the two chains' clocks that still measures a clock.
CHAINS_AGREE = 0.1
TRIALS = 50
TRIAL_SECONDS = 0.003

METHOD = (f"a chain of {CHAIN_LENGTH} dependent register adds (1 cycle each), checked "
          "against dependent 64-bit multiplies (3 cycles each), timed on every usable core at "
          f"once, best of {TRIALS} trials per core; the highest core's clock")


def chain_code(link: bytes, length: int = CHAIN_LENGTH) -> bytes:
    """A function f(n) that runs n iterations of `length` dependent `link`s on rax (rcx = 1)
    and returns rax (System V x86-64: n in rdi)."""
    body = link * length + b"\x48\xff\xcf"  # dec rdi
    jump = b"\x0f\x85" + (-(len(body) + 6)).to_bytes(4, "little", signed=True)  # jnz body
    return b"\xb8\x01\x00\x00\x00\xb9\x01\x00\x00\x00" + body + jump + b"\xc3"  # mov eax/ecx,1


class Chain:
    """A chain's machine code in an executable page, callable from any thread."""

    def __init__(self, link: bytes):
        code = chain_code(link)
        self._page = mmap.mmap(-1, mmap.PAGESIZE * (1 + len(code) // mmap.PAGESIZE),
                               prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        self._page.write(code)
        address = ctypes.addressof(ctypes.c_char.from_buffer(self._page))
        self.call = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_uint64)(address)

    def ghz(self, latency: int, iterations: int) -> float:
        """The clock one call of `iterations` measures, in GHz."""
        start = time.perf_counter()
        self.call(iterations)
        return iterations * CHAIN_LENGTH * latency / (time.perf_counter() - start) / 1e9


def _core_clock(core: int, chains: list[tuple[Chain, int]], barrier: threading.Barrier,
                readings: dict) -> None:
    """Pin this thread to `core` and keep each chain's best clock over TRIALS."""
    os.sched_setaffinity(0, {core})
    best = [0.0] * len(chains)
    for _ in range(TRIALS):
        for k, (chain, latency) in enumerate(chains):
            iterations = max(1, int(TRIAL_SECONDS * 5e9 / (CHAIN_LENGTH * latency)))
            barrier.wait()
            best[k] = max(best[k], chain.ghz(latency, iterations))
    readings[core] = best


def sustained_clock() -> dict:
    """The clock measured on every usable core at once: {"ghz", "per_core_ghz", "method"},
    or {"ghz": None, "why"} where it cannot be measured here."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return {"ghz": None, "why": f"no clock chain for a {platform.machine()} CPU"}
    try:
        chains = [(Chain(link), latency) for link, latency in (ADD_RAX_RCX, IMUL_RAX_RCX)]
    except (OSError, ValueError) as error:
        return {"ghz": None, "why": f"no executable page for the clock chain ({error})"}
    cores = sorted(os.sched_getaffinity(0))
    barrier, readings = threading.Barrier(len(cores)), {}
    threads = [threading.Thread(target=_core_clock, args=(core, chains, barrier, readings))
               for core in cores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return clock_record(readings)


def clock_record(readings: dict[int, list[float]]) -> dict:
    """The record of per-core (add, multiply) clocks: the highest core's add-chain clock,
    or no clock where a core's two chains disagree by more than CHAINS_AGREE."""
    for core, (add, multiply) in sorted(readings.items()):
        if abs(add - multiply) > CHAINS_AGREE * max(add, multiply):
            return {"ghz": None, "why": f"core {core}'s add and multiply chains disagree "
                                        f"({add:.2f} and {multiply:.2f} GHz)"}
    per_core = [round(readings[core][0], 3) for core in sorted(readings)]
    return {"ghz": max(per_core), "per_core_ghz": per_core, "method": METHOD}
