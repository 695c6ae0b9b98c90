"""Randomly generated programs in the supported language, differentiated end to end.

Each example is a small module written to a real file (chadpy reads source with
`inspect`), with straight-line code, reassignments, augmented assignments, tuples
and unpacking, `if`/`else` joins, early returns, conditional expressions,
`and`/`or`, n-ary `max`/`min`, `%`, `**`, math functions, a module constant and
calls of helper functions (defaults, keywords, keyword-only, recursion, tuples). Every intermediate
value is kept bounded (sin, cos, tanh, atan on top), so central differences are
accurate. For each program:

- every stage, simplified or not, gives the same gradient (`fd.MODES`);
- `value_and_grad` returns exactly the function's value;
- the gradient matches central differences, except at points where the finite
  difference itself shows a jump (a branch boundary within the step).
"""

from __future__ import annotations

import importlib.util
import itertools
import math

import pytest
from hypothesis import Phase, assume, given, note, settings
from hypothesis import strategies as st

import chadpy as chad
from tests.support.fd import MODES, assert_close, central_diff, same_across_modes

HELPERS = """\
import math


def helper(a, b=0.5):
    return math.sin(a) * b + a * 0.3


def helper_one(a):
    if a > 0.0:
        return math.tanh(a)
    return a * 0.5


def helper_pair(a, b):
    return (math.cos(a) * b, a - b * 0.25)


def helper_rec(a, n):
    if n == 0:
        return a
    return helper_rec(math.sin(a) * 0.9, n - 1)


def helper_kw(a, *, k=0.5):
    return a * k + SHIFT


SHIFT = 0.25


"""

_OUTER = ["math.sin", "math.cos", "math.tanh", "math.atan", ""]
_BINOPS = ["+", "-", "*"]
_CONSTS = ["0.5", "-0.75", "1.25", "2.0", "0.1"]


class _Gen:
    """Draws one function body; `vars` are the float variables in scope."""

    def __init__(self, draw):
        self.draw = draw
        self.fresh = itertools.count()

    def new_name(self) -> str:
        return f"v{next(self.fresh)}"

    def atom(self, vars_: list[str]) -> str:
        if self.draw(st.integers(0, 4)) == 0:
            return self.draw(st.sampled_from(_CONSTS))
        return self.draw(st.sampled_from(vars_))

    def inner(self, vars_: list[str]) -> str:
        a, b = self.atom(vars_), self.atom(vars_)
        kind = self.draw(st.integers(0, 6))
        if kind == 0:
            return f"-{a}"
        if kind == 1:
            return f"{a} / (1.0 + {b} * {b})"
        if kind == 2:
            return self.draw(
                st.sampled_from(
                    [
                        f"math.hypot({a}, {b}, 0.5)",
                        f"math.sqrt(1.0 + {a} * {a})",
                        f"math.log(1.0 + {a} * {b} * {a} * {b})",
                        f"{a} ** 2",
                        f"{a} % 1.5",
                        f"helper_rec({a}, 3)",
                        f"helper_kw({a}, k={b})",
                        f"helper_kw({a})",
                        f"math.exp(-{a} * {a})",
                        f"math.erf({a}) * SHIFT",
                    ]
                )
            )
        return f"{a} {self.draw(st.sampled_from(_BINOPS))} {b}"

    def bounded(self, vars_: list[str]) -> str:
        """An expression whose value stays within about [-2, 2]."""
        outer = self.draw(st.sampled_from(_OUTER))
        inner = self.inner(vars_)
        return f"{outer}({inner})" if outer else f"math.sin({inner}) * 0.9"

    def condition(self, vars_: list[str]) -> str:
        a, b = self.draw(st.sampled_from(vars_)), self.atom(vars_)
        kind = self.draw(st.integers(0, 3))
        if kind == 0:
            return f"{a} > {b}"
        if kind == 1:
            return f"-0.5 < {a} <= {b}"
        if kind == 2:
            return f"not {a} < {b}"
        return f"{a} > 0.0 and {b} < 0.5"

    def block(self, out: list[str], indent: str, vars_: list[str], depth: int, n: int) -> None:
        for _ in range(n):
            self.statement(out, indent, vars_, depth)

    def statement(self, out: list[str], indent: str, vars_: list[str], depth: int) -> None:
        kind = self.draw(st.integers(0, 11 if depth < 2 else 7))
        if kind <= 1:  # a new variable
            name = self.new_name()
            out.append(f"{indent}{name} = {self.bounded(vars_)}")
            vars_.append(name)
        elif kind == 2:  # reassignment
            name = self.draw(st.sampled_from(vars_))
            out.append(f"{indent}{name} = {self.bounded(vars_)}")
        elif kind == 3:  # augmented assignment, then squashed again
            name = self.draw(st.sampled_from(vars_))
            op = self.draw(st.sampled_from(["+=", "-=", "*="]))
            out.append(f"{indent}{name} {op} {self.bounded(vars_)}")
            out.append(f"{indent}{name} = math.tanh({name})")
        elif kind == 4:  # tuples: build, nest, unpack, index
            a, b, c = (self.draw(st.sampled_from(vars_)) for _ in range(3))
            t, p, q, r = (self.new_name() for _ in range(4))
            out.append(f"{indent}{t} = ({a}, ({b}, {c} * 0.5))")
            out.append(f"{indent}{p}, ({q}, {r}) = {t}")
            s = self.new_name()
            out.append(f"{indent}{s} = math.sin({t}[-1][-1] + {t}[0])")
            vars_ += [p, q, r, s]
        elif kind == 5:  # conditional expression
            name = self.new_name()
            out.append(f"{indent}{name} = {self.bounded(vars_)} if {self.condition(vars_)} else {self.bounded(vars_)}")
            vars_.append(name)
        elif kind == 6:  # calls of helpers (defaults, keywords, one parameter, tuple result)
            name = self.new_name()
            a, b = self.draw(st.sampled_from(vars_)), self.atom(vars_)
            call = self.draw(
                st.sampled_from(
                    [
                        f"helper({a})",
                        f"helper({a}, {b})",
                        f"helper(b={a}, a={b})",
                        f"helper_one({a})",
                        f"helper_pair({a}, {b})[0]",
                        f"helper_pair({b}, {a})[-1]",
                    ]
                )
            )
            out.append(f"{indent}{name} = math.sin({call})")
            vars_.append(name)
        elif kind == 7:  # n-ary max / min, and/or on floats
            name = self.new_name()
            a, b, c = (self.atom(vars_) for _ in range(3))
            expr = self.draw(
                st.sampled_from(
                    [
                        f"max({a}, {b}, {c})",
                        f"min({a}, {b})",
                        f"abs({a}) - {b}",
                        f"({a} > {b} and {c}) or {b}",
                    ]
                )
            )
            out.append(f"{indent}{name} = math.tanh({expr})")
            vars_.append(name)
        elif kind <= 9:  # if/else joining variables assigned on both branches
            joined = self.new_name()
            out.append(f"{indent}if {self.condition(vars_)}:")
            for branch in (0, 1):
                if branch:
                    out.append(f"{indent}else:")
                inner_vars = list(vars_)
                self.block(out, indent + "    ", inner_vars, depth + 1, self.draw(st.integers(0, 2)))
                out.append(f"{indent}    {joined} = {self.bounded(inner_vars)}")
            vars_.append(joined)
        elif kind == 10:  # if without else, reassigning an existing variable
            name = self.draw(st.sampled_from(vars_))
            out.append(f"{indent}if {self.condition(vars_)}:")
            inner_vars = list(vars_)
            self.block(out, indent + "    ", inner_vars, depth + 1, self.draw(st.integers(0, 2)))
            out.append(f"{indent}    {name} = {self.bounded(inner_vars)}")
        else:  # early return
            out.append(f"{indent}if {self.condition(vars_)}:")
            inner_vars = list(vars_)
            self.block(out, indent + "    ", inner_vars, depth + 1, self.draw(st.integers(0, 2)))
            out.append(f"{indent}    return {self.result(inner_vars)}")

    def result(self, vars_: list[str]) -> str:
        picked = self.draw(st.lists(st.sampled_from(vars_), min_size=1, max_size=4))
        return " + ".join(f"{v} * {c}" for v, c in zip(picked, itertools.cycle(["1.0", "0.5", "-1.5", "2.0"])))


@st.composite
def programs(draw) -> str:
    gen = _Gen(draw)
    out = ["def f(x, y):"]
    vars_ = ["x", "y"]
    gen.block(out, "    ", vars_, 0, draw(st.integers(1, 8)))
    out.append(f"    return {gen.result(vars_)}")
    return HELPERS + "\n".join(out) + "\n"


_counter = itertools.count()

# Each example writes, imports and differentiates a module: shrinking a failure
# would run hundreds of them, so a failure is reported as generated (the program
# is printed by `note`) and the suite stays fast; more examples than elsewhere,
# since each program is a new test.
no_shrink = settings(phases=[Phase.explicit, Phase.reuse, Phase.generate], max_examples=100)


@pytest.fixture(scope="session")
def program_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("random_programs")


def load(directory, source: str):
    name = f"chadpy_random_program_{next(_counter)}"
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


@pytest.mark.slow
@no_shrink
@given(source=programs(), x=st.floats(-2.0, 2.0), y=st.floats(-2.0, 2.0))
def test_random_program(program_dir, source, x, y):
    note(source)
    f = load(program_dir, source)
    value = f(x, y)
    assert math.isfinite(value)

    grads = {}
    for stage, simplify in MODES:
        v, g = chad.value_and_grad(f, argnums=(0, 1), simplify=simplify, stage=stage)(x, y)
        assert v == value and type(v) is type(value), f"{stage}, simplify={simplify}: value {v!r} != {value!r}"
        grads[stage, simplify] = g
    same_across_modes(grads, "gradient")
    grads[True] = grads["efficient", True]

    for i in (0, 1):
        # a branch boundary within the step shows up as one-sided differences that
        # disagree (a jump or a kink), or as a gradient that changes within the step
        # (a branch taken only at this very point); such points are skipped
        assume(_smooth_at(f, (x, y), i) and _same_gradient_nearby(f, (x, y), i, grads[True]))
        fd = central_diff(f, (x, y), i, h=1e-6)
        assert_close(grads[True][i], fd, rtol=1e-5, atol=1e-5, where=f"d/d{'xy'[i]}")


def _same_gradient_nearby(f, args: tuple, i: int, g: tuple, h: float = 1e-6) -> bool:
    for step in (h, -h):
        moved = list(args)
        moved[i] += step
        g_moved = chad.grad(f, argnums=(0, 1))(*moved)
        if any(abs(a - b) > 1e-4 * (1.0 + abs(b)) for a, b in zip(g_moved, g)):
            return False
    return True


def _smooth_at(f, args: tuple, i: int, h: float = 1e-6) -> bool:
    lo, hi = list(args), list(args)
    lo[i] -= h
    hi[i] += h
    f0 = f(*args)
    forward = (f(*hi) - f0) / (hi[i] - args[i])
    backward = (f0 - f(*lo)) / (args[i] - lo[i])
    return abs(forward - backward) <= 1e-4 * (1.0 + abs(forward))


@no_shrink
@given(source=programs(), x=st.floats(-2.0, 2.0), y=st.floats(-2.0, 2.0), ct=st.floats(-2.0, 2.0))
def test_random_program_vjp_is_linear_in_the_cotangent(program_dir, source, x, y, ct):
    note(source)
    f = load(program_dir, source)
    out, pullback = chad.vjp(f, x, y)
    assert out == f(x, y)
    g1 = pullback(1.0)
    gc = pullback(ct)
    assert_close(gc, tuple(ct * g for g in g1), rtol=1e-12, atol=1e-12, where="pullback(ct)")
