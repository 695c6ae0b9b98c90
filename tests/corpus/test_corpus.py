"""chadpy on its own corpus (tests/corpus/): every function is differentiated, or refused with a
`ChadError` exactly when `EXPECTED_REFUSED` says so.

For each case (`registry.CASES`), on fresh arguments from the case's seed each time:

- the plain call gives the value, the arguments after it and the side effects (`case.state`);
- `chad.value_and_grad` must give the same value, leave the arguments as the plain call leaves
  them (unchanged, unless the function itself writes into them) and have the same side effects;
- its gradient must match central differences (`tests/support/fd.py`).

Outcomes: ok, refused (a `chad.ChadError`), wrong (any check above fails), crash (any other
exception from chadpy). The test of a case fails unless it is ok, or refused and listed in
`EXPECTED_REFUSED`; a listed case that starts to pass fails too, so it is moved out.
"""

from __future__ import annotations

import copy
import functools
import inspect
import traceback
import types
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pytest

import chadpy as chad
from tests.corpus import MODULES
from tests.corpus.registry import CASES, EXPECTED_REFUSED, Case
from tests.support.fd import _is_discrete, _is_record, assert_close, central_diff
from tests.support.paths import ROOT


@dataclass(frozen=True)
class Outcome:
    kind: str  # "ok", "refused", "wrong" or "crash"
    detail: str = ""


# ---------------------------------------------------------------- comparing structures


def _snapshot(x: object) -> object:
    """A deep copy to compare against later (a generator is kept as its state)."""
    if isinstance(x, np.random.Generator):
        return ("Generator", x.bit_generator.state)
    return copy.deepcopy(x)


def _differs(a: object, b: object, where: str) -> str | None:
    """Where two values differ (deep: arrays by dtype, shape and elements, objects by attributes), or None."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return f"{where}: {a!r} vs {b!r}"
        if a.dtype != b.dtype or a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
            return f"{where}: {a!r} vs {b!r}"
        return None
    if isinstance(a, (list, tuple)):
        if type(a) is not type(b) or len(a) != len(b):
            return f"{where}: {a!r} vs {b!r}"
        return next((d for k, (x, y) in enumerate(zip(a, b)) if (d := _differs(x, y, f"{where}[{k}]"))), None)
    if isinstance(a, dict):
        if not isinstance(b, dict) or a.keys() != b.keys():
            return f"{where}: {a!r} vs {b!r}"
        return next((d for k in a if (d := _differs(a[k], b[k], f"{where}[{k!r}]"))), None)
    if isinstance(a, np.random.Generator):
        return _differs(_snapshot(a), _snapshot(b), where)
    if isinstance(a, types.FunctionType):  # two builds make two lambdas of the same code
        same = isinstance(b, types.FunctionType) and a.__code__ is b.__code__
        return None if same else f"{where}: {a!r} vs {b!r}"
    if _is_record(a):
        if type(a) is not type(b):
            return f"{where}: {a!r} vs {b!r}"
        return _differs(vars(a), vars(b), where)
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return None
    return None if a == b else f"{where}: {a!r} vs {b!r}"


def _plain(g: object) -> object:
    """A gradient as plain structures for `assert_close`: an object becomes a dict of its attributes
    (under a key naming its class), and whatever holds no float (an int attribute, a list of ints)
    becomes None, whichever way the gradient spells it."""
    if g is None or _is_discrete(g):
        return None
    if isinstance(g, (list, tuple)):
        items = [_plain(v) for v in g]
        if all(v is None for v in items) and g:
            return None
        return tuple(items) if isinstance(g, tuple) else items
    if isinstance(g, dict):
        items = {k: _plain(v) for k, v in g.items()}
        return None if g and all(v is None for v in items.values()) else items
    if _is_record(g):
        return {f"<{type(g).__name__}>": _plain(vars(g))}
    return g


# ---------------------------------------------------------------- one case


def _located(exc: BaseException) -> str:
    """The exception's message and the innermost frame it came from."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f"\n  at {frames[-1].filename}:{frames[-1].lineno}: {frames[-1].line}" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


def check(case: Case) -> Outcome:
    plain = case.call()
    value = plain.fn(*plain.args)
    args_after_plain = _snapshot(plain.args)
    state_after_plain = _snapshot(case.state(plain)) if case.state else None

    run = case.call()
    try:
        got_value, grad = chad.value_and_grad(run.fn, argnums=case.argnums)(*run.args)
    except chad.ChadError as e:
        return Outcome("refused", f"{type(e).__name__}: {e}")
    except Exception as e:  # anything else escaping chadpy is a crash
        return Outcome("crash", _located(e))

    if (d := _differs(float(got_value), float(value), "value")) is not None:
        return Outcome("wrong", f"value_and_grad's value differs from the plain call's: {d}")
    if (d := _differs(_snapshot(run.args), args_after_plain, "arguments")) is not None:
        return Outcome("wrong", f"arguments after the derivative differ from after the plain call: {d}")
    if case.state and (d := _differs(_snapshot(case.state(run)), state_after_plain, "side effects")) is not None:
        return Outcome("wrong", f"side effects differ from the plain call's: {d}")

    fd = case.call()
    nums = case.argnums if isinstance(case.argnums, tuple) else (case.argnums,)
    expected = tuple(central_diff(fd.fn, fd.args, i) for i in nums)
    if not isinstance(case.argnums, tuple):
        expected = expected[0]
    try:
        assert_close(_plain(grad), _plain(expected), rtol=case.rtol, atol=case.atol)
    except AssertionError as e:
        return Outcome("wrong", f"gradient differs from central differences: {e}")
    return Outcome("ok")


@functools.cache
def outcome(name: str) -> Outcome:
    return check(CASES[name])


def corpus_counts() -> Counter:
    """How many cases end in each outcome."""
    return Counter(outcome(name).kind for name in CASES)


def corpus_sentence(passed: int, total: int) -> str:
    """docs/language.md's sentence on the corpus, for `passed` of `total` functions differentiated."""
    return (
        f"chadpy differentiates {passed} of the {total} functions of its own corpus (`tests/corpus/`: "
        "losses and layers in the style of numpy-ml and CS231n, Nielsen's and Karpathy's networks, "
        "robotics, physics simulations, emcee-style log densities, evaluation counters, layers that "
        "initialise themselves on the first call, everyday practitioner code), each gradient checked "
        "against central differences and each side effect against the plain call's; "
        "`tests/corpus/registry.py` lists the ones it refuses and why."
    )


# ---------------------------------------------------------------- tests


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_function(name):
    result = outcome(name)
    if name in EXPECTED_REFUSED:
        assert result.kind == "refused", (
            f"{name} is listed in EXPECTED_REFUSED ({EXPECTED_REFUSED[name]}) but is now {result.kind}: "
            f"move it out of the list\n{result.detail}"
        )
    else:
        assert result.kind == "ok", f"{name}: {result.kind}\n{result.detail}"


def test_expected_refused_are_cases_with_reasons():
    assert set(EXPECTED_REFUSED) <= set(CASES), set(EXPECTED_REFUSED) - set(CASES)
    assert all(reason.strip() for reason in EXPECTED_REFUSED.values())


def test_the_corpus_is_large_varied_and_documented():
    assert len(CASES) >= 64
    by_module = Counter(case.module for case in CASES.values())
    assert set(by_module) == {m.__name__.rsplit(".", 1)[-1] for m in MODULES}, by_module
    for name, case in CASES.items():
        doc = inspect.getdoc(case.fn)
        assert doc and doc.strip(), f"{name} has no docstring saying what it imitates"
        lines = len(inspect.getsource(case.fn).splitlines())
        assert lines <= 45, f"{name} is {lines} lines long"


def test_the_inputs_are_deterministic():
    for case in CASES.values():
        assert _differs(_snapshot(case.call().args), _snapshot(case.call().args), case.name) is None


def test_the_language_page_states_the_corpus_pass_rate():
    """docs/language.md says how many corpus functions chadpy differentiates (each case's own test checks that
    exactly those outside `EXPECTED_REFUSED` are)."""
    page = " ".join((ROOT / "docs" / "language.md").read_text(encoding="utf-8").split())
    assert corpus_sentence(len(CASES) - len(EXPECTED_REFUSED), len(CASES)) in page
