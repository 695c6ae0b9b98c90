"""The pipeline's own behaviour around a transformation (`chadpy/build.py`)."""

from __future__ import annotations

import gc
import importlib.util

import pytest

import chadpy as chad
from tests.support.fd import assert_grad_matches_fd, central_diff


@pytest.fixture
def long_chain(tmp_path):
    """A function of 100 lines (the source must be in a file for chadpy to read it)."""
    lines = ["import math", "", "", "def long_chain(x, y):"]
    for k in range(50):
        lines.append(f"    x = math.sin(x) * y + {k}.0")
        lines.append("    y = y * x / (1.0 + x * x)")
    lines.append("    return x + y")
    path = tmp_path / "long_chain_module.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location("long_chain_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.long_chain


def collections_during(fn, *args) -> list[int]:
    """The generations of the collections that start while fn(*args) runs."""
    started = []

    def record(phase, info):
        if phase == "start":
            started.append(info["generation"])

    gc.collect()
    gc.callbacks.append(record)
    try:
        fn(*args)
    finally:
        gc.callbacks.remove(record)
    return started


def test_a_transformation_pauses_the_collector(long_chain):
    """Only one collection, of the youngest objects, right after the passes (it frees what they left
    in cycles): none scans the user's heap while they run."""
    assert collections_during(chad.source, long_chain, 0.3, 0.7) == [0]
    assert gc.isenabled()


def test_without_the_pause_the_same_transformation_collects_often(long_chain, monkeypatch):
    """The test above can fail: the passes allocate enough to start many collections."""
    monkeypatch.setattr(gc, "disable", lambda: None)  # the pause does nothing
    assert len(collections_during(chad.source, long_chain, 0.3, 0.7)) > 5


def test_a_collector_the_user_disabled_stays_disabled(long_chain):
    gc.disable()
    try:
        chad.source(long_chain, 0.3, 0.7)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_rejected_function_leaves_the_collector_running():
    def uses_class(x):
        class Box:
            y = x * x

        return Box.y

    with pytest.raises(chad.ChadError):
        chad.source(uses_class, 1.0)
    assert gc.isenabled()


def test_the_derivative_of_a_long_function_is_right(long_chain):
    """What was built with the collector paused computes the gradient (central differences)."""
    gx, gy = chad.grad(long_chain, argnums=(0, 1))(0.3, 0.7)
    fx, fy = (central_diff(long_chain, (0.3, 0.7), i) for i in (0, 1))
    assert gx == pytest.approx(fx, rel=1e-5, abs=1e-7)
    assert gy == pytest.approx(fy, rel=1e-5, abs=1e-7)


# ====================================================================== 10. deep expressions


def _module(tmp_path, name: str, source: str):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # 3 s: the whole suite runs it, the development subset leaves it
def test_a_2000_term_sum(tmp_path):
    terms = " + ".join(f"z * {k}.0" for k in range(2000))
    f = _module(tmp_path, "deep_sum", f"def f(z):\n    return {terms}\n").f
    assert chad.grad(f)(1.5) == float(sum(range(2000)))


def test_100_nested_calls(tmp_path):
    f = _module(tmp_path, "deep_calls", "import math\n\ndef f(z):\n    return " + "math.sin(" * 100 + "z" + ")" * 100).f
    assert_grad_matches_fd(f, (0.7,))
