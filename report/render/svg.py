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


def svg_pool(jobs: int, spare_cores: int = 0) -> ProcessPoolExecutor:
    """A pool of up to one renderer per core (less `spare_cores`, kept for other work) for
    `jobs` charts; a worker starts at its first job, so a build whose SVGs are all cached
    starts none."""
    workers = max(1, min((os.cpu_count() or 1) - spare_cores, jobs))
    return ProcessPoolExecutor(max_workers=workers,
                               mp_context=multiprocessing.get_context("spawn"))


def javascript_bundle(vl_version: str) -> str:
    """Vega, Vega-Lite and vega-embed as one script, as vl-convert bundles them."""
    return vl_convert.javascript_bundle(vl_version=vl_version)


class BackgroundBundle:
    """vl-convert's script bundle, made in a worker process while the build goes on (making
    it holds the interpreter lock for seconds); made here instead when `start` is False."""

    def __init__(self, vl_version: str, start: bool) -> None:
        self._vl_version = vl_version
        self._pool = svg_pool(1) if start else None
        self._future = self._pool.submit(javascript_bundle, vl_version) if self._pool else None

    def result(self) -> str:
        """The bundle's script."""
        if self._pool is None or self._future is None:
            return javascript_bundle(self._vl_version)
        try:
            return self._future.result()
        finally:
            self._pool.shutdown()
