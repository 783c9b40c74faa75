"""The demos behind ``evaldelta demo``: the seeds' worked scenarios on bundled data, offline.

The data files live in ``evaldelta/data`` and are made by ``tools/generate_demo_data.py``
with a fixed seed (recorded in ``data/MANIFEST.json``). The modules depend one way:
:mod:`~evaldelta.demo.scenarios` (every scenario, and ``run_demo``, the whole printout) uses
:mod:`~evaldelta.demo.seeds` (each seed's figures beside the data's),
:mod:`~evaldelta.demo.audit` (seed 002's audit and rubric leakage),
:mod:`~evaldelta.demo.regression` (failures become regression cases) and
:mod:`~evaldelta.demo.upstream` (the upstream change detector);
:mod:`~evaldelta.demo.live` is ``demo --live``. All of them find the bundled files through
:func:`data_path`, here, which imports nothing of theirs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources import as_file, files
from pathlib import Path

__all__ = ["data_path"]


@contextmanager
def data_path(name: str) -> Iterator[Path]:
    """A real filesystem path for a bundled data file."""
    with as_file(files("evaldelta.data").joinpath(name)) as path:
        yield Path(path)
