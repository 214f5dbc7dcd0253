"""Static SVG rendering in worker processes: vl-convert holds the interpreter lock while it
renders, so threads render one chart at a time; processes render one per core.

This module imports vl_convert alone, so a worker starts without pandas or altair.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import vl_convert


def render_svg(spec: dict, vl_version: str) -> bytes:
    """The static SVG of a Vega-Lite spec; fails on any reference to an external URL."""
    return vl_convert.vegalite_to_svg(spec, vl_version=vl_version, allowed_base_urls=[]).encode()


def svg_pool(jobs: int) -> ProcessPoolExecutor:
    """A pool of up to one renderer per core for `jobs` charts; a worker starts at its first
    job, so a build whose SVGs are all cached starts none."""
    workers = max(1, min(os.cpu_count() or 1, jobs))
    return ProcessPoolExecutor(max_workers=workers,
                               mp_context=multiprocessing.get_context("spawn"))
