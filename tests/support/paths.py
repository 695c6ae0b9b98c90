"""Where things are: the repository's root (the README, docs/, benchmarks/, examples/), and the benchmark's
GradBench evals that tests differentiate too."""

import functools
import importlib.util
import pathlib
import types

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


@functools.cache
def gradbench() -> types.ModuleType:
    """The benchmark's GradBench evals (`benchmarks/gradbench.py`: plain NumPy, not a package), loaded once."""
    spec = importlib.util.spec_from_file_location("chadpy_benchmarks_gradbench", ROOT / "benchmarks" / "gradbench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
