"""Functions written as source text at test time: chadpy reads a function's source from its file,
so each one goes to a real module in a temporary folder."""

from __future__ import annotations

import importlib.util
import itertools
import os
import tempfile
from collections.abc import Callable

_folder = tempfile.mkdtemp(prefix="chadpy-tests-")
_numbers = itertools.count()


def load_function(source: str, prefix: str = "module") -> Callable:
    """The function `f` that `source` defines, imported from a file of its own."""
    name = f"{prefix}_{next(_numbers)}"
    path = os.path.join(_folder, f"{name}.py")
    with open(path, "w") as out:
        out.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f
