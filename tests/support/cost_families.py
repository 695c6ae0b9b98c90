"""Program families indexed by a size n, from the paper (sections 4 and 7, Appendix A) and its neighbours.

Each family makes a function and its arguments for a given n; straight-line families
are written out as Python source (n statements) and imported from a temporary file,
since chadpy reads a function's source. `measure` runs a family at one size and stage
and returns the deterministic costs (`chadpy.cost_report`). The cost-bound tests
(tests/test_cost_bounds.py) and the plot (benchmarks/cost_plot.py) both use these.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import chadpy as chad
from tests.support.sources import load_function


@dataclass(frozen=True)
class Family:
    name: str
    what: str  # the program, in words
    make: Callable[[int], tuple[Callable, tuple]]  # n -> (function, arguments)
    env_grows: bool  # the environment Γ grows with n: where Fig. 2's dense vectors must fail
    exact: bool = True  # its primal cost is a linear function of n (not so where n is rounded to a shape)


def _straight_line(name: str, params: str, lines: list[str], result: str, prelude: str = "") -> Callable:
    body = "\n".join("    " + line for line in lines)
    return load_function(
        prefix=name, source=f"import math\n\n{prelude}\ndef f({params}):\n{body}\n    return {result}\n"
    )


def projections(n: int):
    """op(fst x, ..., fst x): the first component of an n-tuple, used n times (section 4)."""
    lines = ["s = x[0]"] + ["s = s + x[0]"] * (n - 1)
    return _straight_line(f"projections_{n}", "x", lines, "s"), (tuple(0.5 + k / n for k in range(n)),)


def one_hot_env(n: int):
    """n variables in scope (the parameters), each referenced once: one-hot environment vectors."""
    params = ", ".join(f"x{k}" for k in range(n))
    lines = ["s = x0"] + [f"s = s + x{k}" for k in range(1, n)]
    return _straight_line(f"one_hot_env_{n}", params, lines, "s"), tuple(1.0 + k / n for k in range(n))


def shared(n: int):
    """One value shared n ways: its cotangent is the sum of n contributions."""
    lines = ["y = math.sin(x)", "s = y"] + ["s = s + y"] * (n - 1)
    return _straight_line(f"shared_{n}", "x", lines, "s"), (0.3,)


def share_chain(n: int):
    """x_i = x_{i-1} + x_{i-1}: exponential without sharing, linear with it."""
    lines = [f"x{k} = x{k - 1} + x{k - 1}" for k in range(1, n + 1)]
    return _straight_line(f"share_chain_{n}", "x0", lines, f"x{n}"), (1e-300,)


def fibonacci(n: int):
    """a, b = b, a + b, n times (straight-line code)."""
    lines = ["a = x", "b = x"] + ["a, b = b, a + b"] * n
    return _straight_line(f"fibonacci_{n}", "x", lines, "b"), (1e-200,)


def let_chain(n: int):
    """y = sin(y), n times: a long chain of lets."""
    lines = ["y = x"] + ["y = math.sin(y)"] * n
    return _straight_line(f"let_chain_{n}", "x", lines, "y"), (0.7,)


def term_sum(n: int):
    """x * c_0 + x * c_1 + ... + x * c_{n-1}: one expression n terms long (an AST n deep)."""
    terms = " + ".join(f"x * {1.0 + k / n!r}" for k in range(n))
    return _straight_line(f"term_sum_{n}", "x", [], terms), (0.3,)


def nested_calls(n: int):
    """y = g(y), n times: n calls of another function, each with its own derivative."""
    prelude = "def g(y):\n    return math.sin(y) * 0.5 + y\n\n"
    lines = ["y = x"] + ["y = g(y)"] * n
    return _straight_line(f"nested_calls_{n}", "x", lines, "y", prelude), (0.1,)


def _tree(lo: int, hi: int) -> str:
    """Appendix A's complete binary tree of additions over x_lo..x_{hi-1}, every subtree in a
    conditional (always taken), so that Fig. 2 returns one environment vector per subtree."""
    if hi - lo == 1:
        return f"x{lo}"
    mid = (lo + hi) // 2
    return f"(({_tree(lo, mid)}) if c else 0.0) + (({_tree(mid, hi)}) if c else 0.0)"


def union_tree(n: int):
    """Appendix A: a complete binary tree adding n distinct variables (n a power of two)."""
    params = ", ".join(f"x{k}" for k in range(n))
    f = load_function(prefix=f"union_tree_{n}", source=f"def f({params}, c):\n    return {_tree(0, n)}\n")
    return f, (*(1.0 + k / n for k in range(n)), True)


def _loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + math.sin(x * i)
    return s


def loop(n: int):
    """A loop of n iterations over a scalar state."""
    return _loop, (0.3, n)


def _index_sum(xs):
    s = 0.0
    for i in range(len(xs)):
        s = s + xs[i] * xs[i]
    return s


def indexing_list(n: int):
    """s += xs[i]**2 over a list: one-hot list cotangents (section 7)."""
    return _index_sum, ([0.5 + k / n for k in range(n)],)


def indexing_array(n: int):
    """s += a[i]**2 over a NumPy array: index contributions, scattered once (section 7)."""
    return _index_sum, (np.linspace(0.5, 1.5, n),)


def _fill(x, w):
    n = x.shape[0]
    out = np.zeros(n)
    out[0] = x[0]
    for i in range(1, n):
        out[i] = out[i - 1] * w + x[i]
    return out[n - 1] + out[0]


def fill(n: int):
    """out[i] = out[i - 1] * w + x[i]: a buffer filled element by element (each write O(1))."""
    return _fill, (np.linspace(-0.5, 0.5, n), 0.9)


def _rnn(x, w):
    h = np.zeros((x.shape[0] + 1, x.shape[1]))
    for t in range(x.shape[0]):
        h[t + 1] = np.tanh(w @ h[t] + x[t])
    return np.sum(h[x.shape[0]])


def rnn_buffer(n: int):
    """h[t + 1] = tanh(W h[t] + x[t]): an RNN's hidden states kept in a preallocated buffer."""
    x = np.linspace(-1.0, 1.0, 2 * n).reshape(n, 2)
    return _rnn, (x, np.array([[0.5, -0.3], [0.2, 0.4]]))


def _triangular(v, m):
    el = np.zeros((m, m))
    k = 0
    for i in range(m):
        for j in range(i + 1):
            el[i, j] = v[k]
            k += 1
    return el[m - 1, 0] + el[m - 1, m - 1]


def triangular(n: int):
    """el[i, j] = v[k] below the diagonal (ADBench's GMM): about n elements written one by one."""
    m = (math.isqrt(8 * n + 1) - 1) // 2
    return _triangular, (np.linspace(0.1, 1.0, m * (m + 1) // 2), m)


FAMILIES = [
    Family("projections", "op(x[0], ..., x[0]) on an n-tuple x", projections, True),
    Family("one_hot_env", "x0 + ... + x_{n-1}: n parameters, each used once", one_hot_env, True),
    Family("shared", "y + ... + y: one value shared n ways", shared, True),
    Family("share_chain", "x_i = x_{i-1} + x_{i-1}, n times", share_chain, True),
    Family("fibonacci", "a, b = b, a + b, n times", fibonacci, True),
    Family("let_chain", "y = sin(y), n times", let_chain, True),
    Family("nested_calls", "y = g(y), n times", nested_calls, True),
    Family("term_sum", "x * c_0 + ... + x * c_{n-1}: one expression of n terms", term_sum, True),
    Family("union_tree", "Appendix A: a balanced tree adding n variables", union_tree, True),
    Family("loop", "for i in range(n): s += sin(x*i)", loop, False),
    Family("indexing_list", "for i in range(n): s += xs[i]**2, a list", indexing_list, False),
    Family("indexing_array", "for i in range(n): s += a[i]**2, an array", indexing_array, False),
    Family("fill", "for i in range(1, n): out[i] = out[i - 1] * w + x[i]", fill, False),
    Family("rnn_buffer", "for t in range(n): h[t + 1] = tanh(W @ h[t] + x[t])", rnn_buffer, False),
    Family("triangular", "el[i, j] = v[k] for j <= i, about n elements", triangular, False, exact=False),
]
BY_NAME = {f.name: f for f in FAMILIES}


@functools.cache
def made(family: str, n: int) -> tuple[Callable, tuple]:
    return BY_NAME[family].make(n)


@dataclass(frozen=True)
class Point:
    primal: int
    derivative: int

    @property
    def ratio(self) -> float:
        return self.derivative / self.primal


def measure(family: str, n: int, stage: str, simplify: bool = True) -> Point:
    f, args = made(family, n)
    report = chad.cost_report(f, *args, stage=stage, simplify=simplify)
    return Point(report.primal.total, report.derivative.total)


def slope(ns: list[int], values: list[float]) -> float:
    """The least-squares growth exponent of values in n (slope in log-log)."""
    xs = [math.log(n) for n in ns]
    ys = [math.log(v) for v in values]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


# ====================================================================== higher order (section 9, Appendix C)
#
# Kept out of FAMILIES: tests/test_cost_bounds.py (and benchmarks/cost_plot.py) run every
# family there at every stage for n up to 1024, and these nest n Python frames deep (a
# size of 1024 would pass the interpreter's recursion limit). tests/test_closure_costs.py
# runs them at n <= 64; `measure` finds them through BY_NAME like the others.


def _applied_lambdas(k: int, pad: str = "    ") -> list[str]:
    """(λx_{k-1}. (... (λx_1. x_1) x_2 ...) x_{k-1}) x_k, one lambda a line."""
    if k == 2:
        return [f"{pad}(lambda x1: x1)(x2)"]
    return [f"{pad}(lambda x{k - 1}:", *_applied_lambdas(k - 1, pad + "  "), f"{pad})(x{k})"]


def nested_identity(n: int):
    """Section 9's t_n: n - 1 nested immediately-applied lambdas, the identity on x_n, then
    sin so that the primal does some work. Without closure conversion its derivative costs 2^n."""
    lines = ["y = (", *_applied_lambdas(n), ")"]
    return _straight_line(f"nested_identity_{n}", f"x{n}", lines, "math.sin(y)"), (0.7,)


def _nested_defs(k: int, pad: str = "") -> list[str]:
    """def g_k(x_k): def g_{k-1}(x_{k-1}): ...; return g_{k-1}(x_k), with g_1 the identity."""
    if k == 1:
        return [f"{pad}def g1(x1):", f"{pad}    return x1"]
    return [f"{pad}def g{k}(x{k}):", *_nested_defs(k - 1, pad + "    "), f"{pad}    return g{k - 1}(x{k})"]


def nested_identity_defs(n: int):
    """t_n written with n - 1 nested defs (g_k applies g_{k-1} to its parameter), then sin."""
    f = _straight_line(f"nested_identity_defs_{n}", f"x{n}", _nested_defs(n - 1), f"math.sin(g{n - 1}(x{n}))")
    return f, (0.7,)


def closure_chain(n: int):
    """f_0 = λy. y x; f_k = λy. f_{k-1}(y) + x: n closures, each capturing the previous one and x.
    f_{n-1}(x) = x^2 + (n - 1) x."""
    lines = ["f0 = lambda y: y * x"] + [f"f{k} = lambda y: f{k - 1}(y) + x" for k in range(1, n)]
    return _straight_line(f"closure_chain_{n}", "x", lines, f"f{n - 1}(x)"), (0.3,)


HIGHER_ORDER = [
    Family("nested_identity", "section 9's t_n: n - 1 nested applied lambdas, then sin", nested_identity, False),
    Family("nested_identity_defs", "t_n written with n - 1 nested defs, then sin", nested_identity_defs, False),
    Family("closure_chain", "f_k = lambda y: f_{k-1}(y) + x, n closures", closure_chain, True),
]
BY_NAME.update((f.name, f) for f in HIGHER_ORDER)


# ====================================================================== the bound

# The measured constants (docs/paper.md, "The cost bound"): the tightest are c = 28.4 (simplified, rnn_buffer)
# and c = 80.3 (Fig. 7 code, fill) with c' = 0; these leave a little headroom.
C, C_PRIME = 84, 100
C_LOG, C_LOG_PRIME = 200, 100  # monadic: a persistent trie costs ~log2|Γ| path steps per operation
LINEAR_SLACK = 1500  # |D(2n) - 2 D(n)| for a linear cost: its constant term (measured <= 1035, rnn_buffer)


def excess(pts: dict[int, Point]) -> dict[int, float]:
    """(D(2n) - 2 D(n)) / n: tends to 0 for linear costs, to a positive constant for n log n."""
    return {n: (pts[2 * n].derivative - 2 * pts[n].derivative) / n for n in pts if 2 * n in pts}


def check_bound(pts: dict[int, Point], c: float, c_prime: float, log: bool = False) -> list[str]:
    """Every violation of D <= c' + c * P (* log2 n) and of the growth-exponent criterion."""
    factor = (lambda n: math.log2(n)) if log else (lambda n: 1.0)
    bad = [
        f"n={n}: derivative {p.derivative} > {c_prime} + {c} * {p.primal}" + (" * log2(n)" if log else "")
        for n, p in pts.items()
        if p.derivative > c_prime + c * p.primal * factor(n)
    ]
    ns = sorted(pts)
    grows = slope(ns, [pts[n].derivative / factor(n) for n in ns]) - slope(ns, [pts[n].primal for n in ns])
    # faster growth breaks the bound; slower growth is a fixed cost weighing at the small n (adding a
    # loop's collected one-hots after it: -0.11 for indexing_array), much slower would mean the counts
    # miss work (log2(n) is an upper bound: one-sided there)
    if grows > 0.1 or not log and grows < -0.2:
        bad.append(f"the derivative's growth exponent differs from the primal's by {grows:+.3f}")
    return bad


def assert_within_bound(pts: dict[int, Point], c: float = C, c_prime: float = C_PRIME, log: bool = False) -> None:
    bad = check_bound(pts, c, c_prime, log)
    assert not bad, "\n".join(bad)
