"""The differential tester (`support/differential.py`, programs from `support/progen`) as tests.

- `test_random_programs` (slow): a seeded batch, 300 programs by default
  (`CHAD_RANDOM_PROGRAMS=N` runs N), every 10th checked with every stage;
- `test_random_programs_quick`: 12 other seeds, for the fast development subset (no stage-by-stage checks);
- `test_pullbacks_are_linear_in_the_cotangent`: 15 more, each pullback run at two cotangents.

Both fail listing the seeds of every `wrong`, `crash` and `invalid` program, grouped by
symptom, with one shrunk reproducer (a ready-to-paste regression test) for each `wrong` and
`crash` symptom (the 10 most frequent; 1 in the quick test), and fail if more than 3% of the
programs are `rejected` (the rejection messages grouped). Rerun one seed with
`python -m tests.support.differential --seed S --n 1 --print`, shrink it with `--shrink`.

The other tests check the tester itself: the generator is deterministic and its programs
run; `check` classifies hand-made cases; `shrink` and `format_regression` work.
"""

from __future__ import annotations

import ast
import copy
import importlib.util
import math
import os

import numpy as np
import pytest

import chadpy as chad
from tests.support import differential as D
from tests.support import fd, progen

N_PROGRAMS = int(os.environ.get("CHAD_RANDOM_PROGRAMS", "300"))
MAX_REJECTED = 0.03


def _failure_report(results: dict[int, D.Outcome], shrink_per_class: int, max_checks: int = 600) -> str:
    """'' if the batch is clean; otherwise the grouped failures and shrunk reproducers."""
    problems = []
    bad = [s for s, o in results.items() if o.cls in ("wrong", "crash", "invalid")]
    rejected = sum(o.cls == "rejected" for o in results.values())
    if bad:
        problems.append(f"{len(bad)} of {len(results)} programs are wrong, crash or invalid")
    if rejected > MAX_REJECTED * len(results):
        problems.append(f"{rejected} of {len(results)} programs rejected (more than {MAX_REJECTED:.0%})")
    if not problems:
        return ""
    text = [f"chadpy from {os.path.dirname(chad.__file__)}", *problems, "", D.summary(results, max_seeds=None)]
    picks = []
    for cls in ("wrong", "crash"):
        # one program per symptom, most frequent symptoms first
        picks += [seeds[0] for _, seeds in D.grouped(results, cls)][:shrink_per_class]
    for seed, outcome, small, after in D.shrink_batch(results, picks, max_checks=max_checks):
        text += ["", f"# ---- seed {seed}: {outcome.cls} [{outcome.key}]", D.format_regression(small, after)]
    return "\n".join(text)


@pytest.mark.slow
def test_random_programs():
    results = D.run_batch(list(range(N_PROGRAMS)), stages_every=10)
    report = _failure_report(results, shrink_per_class=10)
    if report:
        pytest.fail(report, pytrace=False)


def test_random_programs_quick():
    results = D.run_batch(list(range(1_000_000, 1_000_012)))
    report = _failure_report(results, shrink_per_class=1, max_checks=120)
    if report:
        pytest.fail(report, pytrace=False)


def test_pullbacks_are_linear_in_the_cotangent():
    """pullback(c) = c * pullback(1.0), leaf by leaf, for the generator's programs (every argument
    differentiated), and the forward pass gives f's value."""
    checked = 0
    for seed in range(2_000_000, 2_000_015):
        program = progen.generate(seed)
        f = D.load(program.source)
        args = progen.bind_args(program.args, f.__globals__)
        try:
            out, pullback = chad.vjp(f, *copy.deepcopy(args))
        except chad.ChadError:
            continue  # counted below: the generator's programs are almost all accepted
        assert out == f(*copy.deepcopy(args)), f"seed {seed}"
        ones, scaled = dict(D.leaves(pullback(1.0))), dict(D.leaves(pullback(-1.7)))
        assert ones.keys() == scaled.keys(), f"seed {seed}"
        for path, g in ones.items():
            assert scaled[path] == pytest.approx(-1.7 * g, rel=1e-12, abs=1e-12), f"seed {seed}, at {path}"
        checked += 1
    assert checked >= 14, f"only {checked} of 15 programs differentiated"


# ====================================================================== the tester itself


def _program(source: str, args: tuple, argnums=0) -> progen.Program:
    return progen.Program(seed=0, source="import math\n\nimport numpy as np\n\n" + source, args=args, argnums=argnums)


def test_generator_is_deterministic():
    for seed in (0, 1, 12345):
        a, b = progen.generate(seed), progen.generate(seed)
        assert a.source == b.source and a.argnums == b.argnums
        assert progen.literal(a.args) == progen.literal(b.args)
    assert progen.generate(1).source != progen.generate(2).source


def test_generated_programs_are_valid_python_that_runs():
    for seed in range(30):
        program = progen.generate(seed)
        ast.parse(program.source)
        nums = (program.argnums,) if isinstance(program.argnums, int) else program.argnums
        assert nums and all(0 <= i < len(program.args) for i in nums)
        f = D.load(program.source)
        value = f(*progen.bind_args(program.args, f.__globals__))
        assert isinstance(value, (float, np.floating)) and math.isfinite(value), (seed, value)


def test_weights_turn_constructs_off():
    kept = ("s_assign", "e_var", "e_const")
    off = {k: 0.0 for k in progen.WEIGHTS if k.startswith(("s_", "e_", "x_")) and k not in kept}
    for seed in range(5):
        f = ast.parse(progen.generate(seed, off).source).body[-1]
        assert all(isinstance(s, (ast.Assign, ast.Return)) for s in f.body)  # type: ignore[attr-defined]
    with pytest.raises(KeyError):
        progen.generate(0, {"no_such_weight": 1.0})
    nothing = {k: 0.0 for k in progen.WEIGHTS}  # every choice falls back to its first option
    for seed in range(5):
        program = progen.generate(seed, nothing)
        f = D.load(program.source)
        assert math.isfinite(f(*progen.bind_args(program.args, f.__globals__)))


# issue 37's forms (progen's inactive, writes and tries): the features their programs have
ISSUE_37 = (
    "raise_guard",
    "assert",
    "global_counter",
    "log",
    "finfo_eps",
    "del",
    "local_import",
    "local_class",
    "outside_state",
    "unpack_array",
    "unpack_rows",
    "unpack_list",
    "list_store",
    "list_fill",
    "dict_store",
    "attr_store",
    "try",
    "try_raise",
    "try_zerodiv",
    "try_library",
    "try_else",
    "try_finally",
    "try_finally_only",
    "try_return",
    "try_two_handlers",
    "try_in_loop",
    "try_continue",
)


def test_issue_37_forms_appear_in_programs_that_run():
    """Each form is in a few percent of the programs, and a program having it runs: a finite float, its
    arguments unchanged, the same value at a second call (the module-level state it updates is not read)."""
    first: dict[str, progen.Program] = {}
    counts = dict.fromkeys(ISSUE_37, 0)
    for seed in range(600):
        program = progen.generate(seed)
        for name in ISSUE_37:
            if name in program.features:
                counts[name] += 1
                first.setdefault(name, program)
    assert all(counts[name] >= 3 for name in ISSUE_37), counts
    for name, program in first.items():
        assert_runs(name, program)


def assert_runs(name: str, program: progen.Program) -> None:
    """The plain program runs: a finite float, the same twice, its arguments unchanged."""
    f = D.load(program.source)
    args = progen.bind_args(program.args, f.__globals__)
    before = copy.deepcopy(args)
    value = f(*args)
    assert isinstance(value, (float, np.floating)) and math.isfinite(value), (name, program.seed, value)
    assert f(*args) == value, (name, program.seed)
    fd.assert_same(args, before, f"arguments after f, seed {program.seed}")


def assert_a_stream_of_their_own(ours: set[str]) -> None:
    """Without the forms `ours` (`extras=0`) a program is the one the generator made before they existed, and a
    program that happens to draw none is that same program."""
    for seed in range(40):
        without = progen.generate(seed, {"extras": 0.0})
        assert not ours & set(without.features), seed
        program = progen.generate(seed)
        if not ours & set(program.features):
            assert program.source == without.source and program.argnums == without.argnums, seed


def test_issue_37_forms_are_a_stream_of_their_own():
    assert_a_stream_of_their_own(set(ISSUE_37))


def test_check_ok():
    outcome = D.check(
        _program("def f(x, v):\n    return math.sin(x) * np.sum(v * v)\n", (0.3, np.array([1.0, 2.0])), (0, 1))
    )
    assert outcome.cls == "ok" and outcome.checked == 3, outcome


def test_check_wrong_gradient(monkeypatch):
    real = chad.value_and_grad

    def off_by_one_percent(f, argnums=0, **kw):
        def vg(*args):
            value, g = real(f, argnums=argnums, **kw)(*args)
            return value, g * 1.01

        return vg

    monkeypatch.setattr(chad, "value_and_grad", off_by_one_percent)
    outcome = D.check(_program("def f(x):\n    return math.sin(x) * x\n", (0.7,)))
    assert (outcome.cls, outcome.key) == ("wrong", "wrong gradient"), outcome


def test_check_wrong_structure(monkeypatch):
    real = chad.value_and_grad
    monkeypatch.setattr(chad, "value_and_grad", lambda f, argnums=0, **kw: lambda *a: (real(f, argnums)(*a)[0], [1.0]))
    outcome = D.check(_program("def f(x):\n    return x * 2.0\n", (0.7,)))
    assert (outcome.cls, outcome.key) == ("wrong", "wrong gradient structure"), outcome


def test_check_rejected():
    source = "def f(x):\n    class Box:\n        v = x * 2.0\n\n    return Box.v\n"
    outcome = D.check(_program(source, (0.7,)))
    assert outcome.cls == "rejected" and "class" in outcome.key and "line" not in outcome.key, outcome


def test_check_crash(monkeypatch):
    def broken(f, argnums=0, **kw):
        raise TypeError("boom")

    monkeypatch.setattr(chad, "value_and_grad", broken)
    outcome = D.check(_program("def f(x):\n    return x\n", (0.7,)))
    assert outcome.cls == "crash" and outcome.key.startswith("TypeError"), outcome


def test_check_invalid_and_skipped():
    assert D.check(_program("def f(x):\n    return x / 0.0\n", (0.7,))).cls == "invalid"
    assert D.check(_program("def f(x):\n    return [x]\n", (0.7,))).cls == "invalid"
    # max(x, 0) at 0: the one-sided differences disagree (a kink), so nothing can be checked
    assert D.check(_program("def f(x):\n    return max(x, 0.0) * 3.0\n", (0.0,))).cls == "skipped"


def test_shrink_keeps_the_rejection_and_prints_a_regression_test(tmp_path):
    source = (
        "def helper(t):\n    return t * 2.0\n\n\n"
        "def f(x, y, v):\n    a = math.sin(x)\n    b = helper(y) + np.sum(v)\n"
        "    if a > b:\n        a = a * b\n"
        "    class Box:\n        c = a * b\n\n    return a + Box.c\n"
    )
    program = _program(source, (0.3, 0.4, np.array([1.0, 2.0])), (0, 1))
    outcome = D.check(program)
    assert outcome.cls == "rejected"
    small = D.shrink(program, outcome)
    assert D.same_failure(D.check(small), outcome)
    assert len(small.source) < len(program.source) and "helper" not in small.source
    text = D.format_regression(small, outcome)
    ast.parse(text)
    assert "def test_differential_s0():" in text and "fd.assert_grad_matches_fd(diff_s0" in text


def test_regression_test_of_an_ok_program_passes(tmp_path):
    program = _program(
        "def h(t, s=0.5):\n    return t * s\n\n\ndef f(x, xs):\n    return h(x) * sum(xs)\n", (0.3, [1.0, 2.0])
    )
    text = D.format_regression(program)
    path = tmp_path / "regression_ok.py"
    path.write_text("import math\n\nimport numpy as np\n\nfrom tests.support import fd\n\n" + text)
    spec = importlib.util.spec_from_file_location("regression_ok", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.test_differential_s0()
