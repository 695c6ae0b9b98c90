"""A long-lived process stays bounded: each function keeps its `CACHE_SIZE` most recently used derivatives, the text
of a derivative is held (in linecache, never in a file) while its code lives, and goes with the function."""

from __future__ import annotations

import gc
import linecache

import numpy as np

import chadpy as chad
from chadpy.api import plans
from chadpy.api.plans import CACHE_SIZE, cache_of


def total(xs):
    s = 0.0
    for x in xs:
        s = s + x * x
    return s


def weighted(d):
    return sum(v * v for v in d.values())


def test_a_function_keeps_its_most_recently_used_derivatives(monkeypatch):
    assert CACHE_SIZE == 32  # what the docs say; a smaller size here, for time
    monkeypatch.setattr(plans, "CACHE_SIZE", 4)
    g = chad.grad(total)
    first = (1.0, 2.0)
    for n in range(1, 4 + 9):  # tuples of many lengths: one derivative each
        assert g(tuple(float(k) for k in range(n))) == tuple(2.0 * k for k in range(n))
        g(first)  # used again and again: never the least recently used
    cache = cache_of(total)
    assert len(cache) == 4 and (((0, None),), ((float, float),), True, "efficient") in cache
    cells = g.func.__closure__  # the gradient function's own lookup tables stay bounded too
    tables = [c.cell_contents for c in cells if isinstance(c.cell_contents, dict) and c.cell_contents is not cache]
    assert tables and all(len(t) <= 4 for t in tables)


def test_dicts_of_many_key_sets(monkeypatch):
    monkeypatch.setattr(plans, "CACHE_SIZE", 4)
    g = chad.grad(weighted)
    for n in range(12):
        d = {f"k{j}": 1.0 for j in range(n + 1)}
        assert g(d) == {k: 2.0 for k in d}
    assert len(cache_of(weighted)) == 4


def _derivative_texts() -> int:
    return sum(name.startswith("<chadpy cell_chad") for name in linecache.cache)


def test_derivative_texts_go_with_their_functions():
    """A notebook's cell run again and again, each time edited: its function's derivatives, and their texts, go
    with the function the cell's new run replaces."""
    notebook: dict = {}  # the notebook's globals
    for k in range(12):
        source = f"def cell(x):\n    return x * x * {k}.0\n"
        filename = f"<notebook cell, run {k}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), notebook)
        assert chad.grad(notebook["cell"])(2.0) == 4.0 * k
        assert _derivative_texts() >= 1  # in linecache, in no file
        del linecache.cache[filename]  # the notebook forgets the cell's old text
    gc.collect()
    assert _derivative_texts() == 1  # the last run's, while its function is the notebook's
    del notebook["cell"]
    gc.collect()
    assert _derivative_texts() == 0


def test_generated_files_only_where_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("CHADPY_GENERATED_DIR", str(tmp_path))

    def shifted(x):
        return np.sum((x - 1.5) ** 2)

    assert np.allclose(chad.grad(shifted)(np.zeros(2)), [-3.0, -3.0])
    written = [p for p in tmp_path.iterdir() if p.name.startswith("shifted_chad")]
    assert len(written) == 1 and written[0].suffix == ".py" and "def shifted_chad" in written[0].read_text()
