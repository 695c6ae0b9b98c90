"""Every derivative rule in the registry, checked against central differences.

The cases come from the registry itself (`PRIMITIVES`, `OPERATORS`, the versions they
resolve to for lists and arrays, and the other primitives of `chadpy.rules`), so a new
registration is checked without touching this file. For each differentiable primitive
and each of its `samples` (a pointwise function's come from its domain; an elementwise
one is also tried on arrays of broadcasting shapes), a tiny function calling it is
written to a module, and chadpy's vjp of it for a random output cotangent is compared
with central differences of <ct, f(args)>, in both code generation modes. A
differentiable primitive without samples must be in `COVERED_ELSEWHERE`, with the test
that covers it.

docs/language.md's list of supported functions is checked against the registry too.
"""

from __future__ import annotations

import builtins
import math
import os
import re

import numpy as np
import pytest

try:
    import scipy.linalg
    import scipy.special
    import scipy.stats
except ImportError:  # SciPy is optional: its rules register only when it imports
    scipy = None
import chadpy as chad
from chadpy import rules
from chadpy.rules.registry import ATTRIBUTES, METHODS, OPERATORS, PRIMITIVES, Primitive, Reals
from tests.support.fd import assert_close, central_diff, inner
from tests.support.paths import ROOT
from tests.support.sources import load_function

# Differentiable primitives this test cannot write as one call, and the tests that check them.
COVERED_ELSEWHERE = {
    "append": "`xs.append(v)` is a statement: tests/language/test_lists_dicts.py",
    "values": "`d.values()` is a method of dicts: tests/language/test_lists_dicts.py",
    "get": "`d.get(k, default)` is a method of dicts: tests/language/test_containers.py",
    "item": "`x.item()` is a method of arrays: tests/language/test_numpy.py",
    "setitem": "`x[k] = v` is a statement: tests/language/test_element_assignment.py",
    "setitem_in": "`x[t][k] = v` is a statement: tests/language/test_element_assignment.py",
    "copied_in": "an attribute updated in place and read again (`local_state.py`): tests/language/test_object_state.py",
    "written_back": "views.py inserts it after a write through a view: tests/language/test_element_assignment.py",
    "viewed_again": "views.py inserts it after a write to a view's base: tests/language/test_element_assignment.py",
    "unchanged": "`t += c` where a copy holds t's object: tests/language/test_element_assignment.py",
    "merged_keywords": "`f(**a, **b)` merges the keywords into one dict: tests/language/test_containers.py",
    "tuple": "`tuple(xs)` of a list is typed as a list (its length is not static): tests/language/test_containers.py",
    "added_at": "`np.add.at(x, k, v)`, a statement, is `x[k] = added_at(x, k, v)`: tests/rules/test_numpy_rules.py",
    "scipy.linalg.cho_solve": "its first argument is the tuple `(c, lower)`: tests/rules/test_scipy_rules.py",
    "tolist": "`x.tolist()` is a method of arrays: tests/language/test_real_code_forms.py",
    "parameter": "a frozen distribution's parameter, read by its methods: tests/language/test_real_code_forms.py",
    "without_keys": "`f(**kw)` into a function with `**kwargs`: tests/language/test_real_code_forms.py",
    # the helpers tangent code calls (forward mode), each checked where its rule is used
    **dict.fromkeys(
        [
            "chadpy.runtime.linalg.as_matrices",
            "chadpy.runtime.linalg.as_vectors",
            "chadpy.runtime.linalg.cofactor",
            "chadpy.runtime.linalg.coupling",
        ],
        "linear algebra's tangent rules: tests/rules/test_tangent_rules_linalg.py",
    ),
    **dict.fromkeys(
        ["chadpy.runtime.pointwise.digamma", "chadpy.runtime.pointwise.polygamma"],
        "the tangents of gamma and lgamma, to any order: tests/rules/test_tangent_rules_special.py",
    ),
    **dict.fromkeys(["laid_out_weights", "interp_slope"], "tests/rules/test_tangent_rules_numpy.py"),
    **dict.fromkeys(
        [
            "chadpy.runtime.tangents.part_or_none",
            "chadpy.runtime.tangents.from_parts",
            "chadpy.runtime.tangents.where_nonzero",
            "chadpy.runtime.tangents.broadcast_like",
            "chadpy.runtime.numpy.safe_divisor",
            "strong_zero",
            "rekeyed",
            "filled_at",
        ],
        "what forward-mode code calls: tests/forward/test_tangent_helpers.py",
    ),
    "chadpy.runtime.tangents.from_columns": "a Jacobian inside differentiated code: tests/forward/test_api.py",
    # the updates and constructors `updates.py` and `desugar.py` lower into: tests/language/test_containers.py
    **dict.fromkeys(["extend", "insert", "pop", "store", "setdefault", "item_or", "dict", "transposed"], "lowering"),
}

# The shapes an elementwise rule is tried on, per arity (None: a float): equal shapes and broadcasting.
# A 0-d array is an array of shape ().
_SHAPES = {
    1: [(None,), ((2, 3),), ((),)],
    2: [(None, None), ((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 3), None), (None, (2, 3)), ((2, 1), (3,)), ((), (2, 3))],
}


# ====================================================================== the registry


def _spelling(fn: object) -> str | None:
    """How source code names a registered function (None: chadpy's own helpers, called by lowering)."""
    module, name = getattr(fn, "__module__", None), getattr(fn, "__name__", None)
    numpy_own = module is not None and module.startswith("numpy")  # `scipy.special.sinc` is NumPy's
    if scipy is not None and name is not None and not numpy_own and getattr(scipy.special, name, None) is fn:
        return f"scipy.special.{name}"  # SciPy's ufuncs name no module
    if scipy is not None and name is not None and (module or "").startswith("scipy.linalg"):
        return f"scipy.linalg.{name}" if getattr(scipy.linalg, name, None) is fn else None
    owner = getattr(fn, "__self__", None)  # `scipy.stats.norm.logpdf`: a method of a distribution
    if scipy is not None and owner is not None and not isinstance(owner, type) and "scipy.stats" in (module or ""):
        family = next(k for k, v in vars(scipy.stats).items() if v is owner)
        return f"scipy.stats.{family}.{name}"
    prefix = {"math": "math.", "builtins": "", "numpy": "np.", "numpy.linalg": "np.linalg."}.get(module)
    return None if prefix is None else prefix + name


def _call(spelled: str, params: tuple[str, ...] | None, required: int):
    """Writes a call of a function: its required parameters by position, the others by keyword."""

    def write(args: list[str]) -> str:
        if params is None:
            return f"{spelled}({', '.join(args)})"
        keywords = [f"{p}={a}" for p, a in zip(params[required:], args[required:])]
        return f"{spelled}({', '.join(args[:required] + keywords)})"

    return write


def _operator(symbol: str):
    if symbol in ("neg", "pos"):
        sign = "-" if symbol == "neg" else "+"
        return lambda args: f"({sign}{args[0]})"
    return lambda args: f"({args[0]} {symbol} {args[1]})"


def registered() -> dict[str, tuple[Primitive, object]]:
    """Every primitive of `chadpy.rules` by a label, with a writer of its call (None where there is none)."""
    found: dict[str, tuple[Primitive, object]] = {}
    for fn, op in PRIMITIVES.items():
        spelled = _spelling(fn)
        if op.runtime_vjp is None:  # a user rule (`defvjp`, maybe by another test) is not chadpy's
            write = spelled and _call(spelled, None if op.nargs[1] is None else op.params, op.nargs[0])
            found[spelled or op.name] = (op, write)
    for symbol, op in OPERATORS.items():
        found[f"operator {symbol}"] = (op, _operator(symbol))
    for label, (op, write) in list(found.items()):
        for variant, kind in ((op.for_sequences, "lists"), (op.for_arrays, "arrays")):
            if variant is not None and not any(variant is p for p, _ in found.values()):
                found[f"{label} on {kind}"] = (variant, write)
    modules = (rules.numpy, rules.reductions, rules.shape, rules.linalg, rules.pointwise, rules.scalar, rules.sequences)
    for module in modules:
        for value in vars(module).values():
            for op in value.values() if isinstance(value, dict) else [value]:
                if isinstance(op, Primitive) and not any(op is p for p, _ in found.values()):
                    # what lowering picks for a call (`max(xs)` of one sequence) or a method (`xs.append(v)`)
                    spelled = _spelling(op.fn) or (op.name if hasattr(builtins, op.name) else None)
                    found[f"{op.name} (lowering)"] = (op, spelled and _call(spelled, op.params, op.nargs[0]))
    return found


REGISTERED = registered()
DIFFERENTIABLE = {label: entry for label, entry in REGISTERED.items() if entry[0].vjp is not None}


def _sampled_calls():
    """(name, primitive, writer, sample, shapes) for every sample of every sampled rule, an elementwise one's on each
    broadcasting shape its sample allows."""
    for label, (op, write) in DIFFERENTIABLE.items():
        for k, sample in enumerate(op.samples if write else ()):
            shapeless = [isinstance(a, Reals) and a.shape is None for a in sample]
            variants = _SHAPES.get(len(sample), [(None,) * len(sample)]) if op.elementwise else [(None,) * len(sample)]
            for shapes in variants:
                if not any(s is not None and not free for s, free in zip(shapes, shapeless)):
                    yield f"{label}-{k}-{'-'.join(map(str, shapes))}", op, write, sample, shapes


def _cases():
    for name, op, write, sample, shapes in _sampled_calls():
        # the whole suite tries every broadcasting shape; the development subset the sample as written
        marks = [pytest.mark.slow] if any(s is not None for s in shapes) else []
        yield pytest.param(op, write, sample, shapes, np.float64, id=name, marks=marks)
        if _has_arrays(sample, shapes):  # the whole suite runs these; the development subset leaves them
            yield pytest.param(op, write, sample, shapes, np.float32, id=name + "-float32", marks=pytest.mark.slow)


def _has_arrays(sample: tuple, shapes: tuple) -> bool:
    """Whether a case passes a float array (tried in float32 too)."""
    return any(
        isinstance(a, Reals)
        and (a.shape is not None or s is not None)
        or isinstance(a, np.ndarray)
        and a.dtype.kind == "f"
        or isinstance(a, list)
        and any(isinstance(i, Reals) and i.shape is not None for i in a)
        for a, s in zip(sample, shapes)
    )


# ====================================================================== the check


def _sampled(spec: Reals, shape: tuple[int, ...] | None, rng: np.random.Generator) -> object:
    shape = spec.shape if spec.shape is not None else shape
    v = rng.uniform(spec.lo, spec.hi, shape or ())
    if spec.signed:
        v = v * rng.choice([-1.0, 1.0], np.shape(v))
    return float(v) if shape is None else np.asarray(v)


def _argument(spec: object, shape: tuple[int, ...] | None, rng: np.random.Generator) -> tuple[bool, object]:
    """(whether it is passed as an argument, its value): sampled reals, lists of them, arrays; else a literal."""
    if isinstance(spec, Reals):
        return True, _sampled(spec, shape, rng)
    if isinstance(spec, list):
        return True, [_argument(s, None, rng)[1] for s in spec]
    return isinstance(spec, np.ndarray), spec


def _like(value: object, rng: np.random.Generator) -> object:
    """A random cotangent for a result."""
    if isinstance(value, (list, tuple)):  # a tuple: the result of `eigh`, `svd`, ...
        parts = [_like(v, rng) for v in value]
        return parts if isinstance(value, list) else tuple(parts)
    if isinstance(value, np.ndarray):
        return rng.standard_normal(value.shape)
    return float(rng.standard_normal())


def _literal(value: object) -> str:
    """A constant argument as source code (`np.inf`, not `inf`)."""
    if isinstance(value, float) and math.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    return repr(value)


def _in(dtype: type, value: object) -> object:
    """value with its float arrays (inside lists too) in dtype."""
    if isinstance(value, list):
        return [_in(dtype, v) for v in value]
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value.astype(dtype)
    return value


def _call(write, sample: tuple, shapes: tuple, rng: np.random.Generator, dtype: type, name: str) -> tuple:
    """(f, its arguments, the call as written): a module-level `f` of the sampled arguments (floats arrays in
    `dtype`) calling the primitive, its other arguments written as literals."""
    params, args, written = [], [], []
    for k, (spec, shape) in enumerate(zip(sample, shapes)):
        passed, value = _argument(spec, shape, rng)
        value = _in(dtype, value)
        if passed:
            params.append(f"x{k}")
            args.append(value)
        written.append(f"x{k}" if passed else _literal(value))
    imports = "import math\n\nimport numpy as np\n" + (
        "import scipy.linalg\nimport scipy.special\nimport scipy.stats\n" if scipy else ""
    )
    f = load_function(f"{imports}\n\ndef f({', '.join(params)}):\n    return {write(written)}\n", name)
    return f, args, written


def _close_in_float32(actual: object, expected: object, arg: object, where: str) -> None:
    """The values of a gradient computed in float32 against float64 finite differences (structure: lists);
    a float32 array argument gets a float32 array gradient."""
    if expected is None:
        assert actual is None, where
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), where
        for a, e, x in zip(actual, expected, arg):
            _close_in_float32(a, e, x, where)
    else:
        assert np.shape(actual) == np.shape(expected), f"{where}: shape {np.shape(actual)} != {np.shape(expected)}"
        if isinstance(arg, np.ndarray) and arg.dtype == np.float32:
            assert isinstance(actual, np.ndarray) and actual.dtype == np.float32, f"{where}: {type(actual)} {actual!r}"
        np.testing.assert_allclose(np.asarray(actual, np.float64), expected, 2e-3, 2e-4, err_msg=where)


@pytest.mark.parametrize(("op", "write", "sample", "shapes", "dtype"), list(_cases()))
def test_rule_matches_finite_differences(op, write, sample, shapes, dtype):
    """In float64, the gradient's structure, shapes and dtypes are exact and its values within 1e-5 of central
    differences. In float32 (the arrays cast), its values are within 2e-3 of central differences of the same
    float32 values taken in float64, and a float32 array argument's gradient is a float32 array."""
    rng = np.random.default_rng(0)
    f, args, written = _call(write, sample, shapes, rng, dtype, "rule")
    ct = _in(dtype, _like(f(*args), rng))
    wide = [_in(np.float64, a) for a in args]  # the same values, for finite differences in float64
    for simplify in (True, False):
        value, pullback = chad.vjp(f, *args, simplify=simplify)
        got = pullback(ct)
        for i, arg in enumerate(args):
            if isinstance(arg, np.ndarray) and arg.dtype == bool:
                assert got[i] is None
                continue
            expected = central_diff(lambda *a: inner(f(*a), _in(np.float64, ct)), wide, i)
            where = f"{write(written)}: d/d x{i} (simplify={simplify}, {np.dtype(dtype)})"
            if dtype is np.float64:
                assert_close(got[i], expected, 1e-5, 1e-6, where)
            else:
                _close_in_float32(got[i], expected, arg, where)


def test_every_differentiable_rule_is_sampled():
    """A new differentiable registration has samples (a pointwise one has them by default) or says where it is
    checked; and no exemption outlives its primitive."""
    unsampled = {label for label, (op, write) in DIFFERENTIABLE.items() if not (op.samples and write)}
    exempt = {label for label in unsampled if label.split(" ")[0] in COVERED_ELSEWHERE}
    assert unsampled == exempt, f"give these rules `samples` or list them in COVERED_ELSEWHERE: {unsampled - exempt}"
    assert {label.split(" ")[0] for label in exempt} == set(COVERED_ELSEWHERE), "stale COVERED_ELSEWHERE entries"


# ====================================================================== the list of supported functions


def _page_lists() -> dict[str, set[str]]:
    """The function names docs/language.md's "Constructs and functions" section lists, by group: "math", "builtins",
    "np", "methods", each with " discrete" for the ones listed as discrete (a list after the word
    "discrete", up to the next ";")."""
    with open(os.path.join(ROOT, "docs", "language.md"), encoding="utf-8") as f:
        section = f.read().split("## Constructs and functions", 1)[1].split("\n## ", 1)[0]
    groups: dict[str, set[str]] = {}
    for bullet in re.split(r"\n- ", section):
        starts = {"`math`:": "math", "NumPy:": "np", "SciPy:": "scipy"}
        label = next((group for start, group in starts.items() if bullet.startswith(start)), None)
        if label is None:
            continue
        for clause in bullet.removeprefix("`math`:").split(";"):
            group, discrete = label, False
            for m in re.finditer(r"(builtins\s)|(discrete\s)|`([^`]*)`", clause):
                if m.group(1):
                    group = "builtins"
                elif m.group(2):
                    discrete = True
                elif re.fullmatch(r"\.?[A-Za-z_][\w.]*( \.?[A-Za-z_][\w.]*)*", " ".join(m.group(3).split())):
                    for word in m.group(3).split():
                        kind = "methods" if word.startswith(".") else "np" if group == "np" else group
                        word = word.removeprefix("np.").removeprefix("scipy.")
                        groups.setdefault(kind + " discrete" * discrete, set()).add(word)
    return groups


def _registry_lists() -> dict[str, set[str]]:
    """The same groups from the registry (NumPy functions as objects: `abs` and `absolute` are one)."""
    groups: dict[str, set] = {}
    for fn, op in PRIMITIVES.items():
        if op.runtime_vjp is not None:
            continue
        spelled = _spelling(fn) or ""
        if spelled.startswith("scipy."):  # named by its path under `scipy` (`special.expit`, `stats.norm.pdf`)
            groups.setdefault("scipy" + " discrete" * op.discrete, set()).add(fn)
            continue
        module = getattr(fn, "__module__", "")
        group = {"math": "math", "builtins": "builtins", "numpy": "np", "numpy.linalg": "np"}.get(module)
        if group is not None:
            groups.setdefault(group + " discrete" * op.discrete, set()).add(fn if group == "np" else fn.__name__)
    for name, fn in [*METHODS.items(), *ATTRIBUTES.items()]:
        own = getattr(fn, "__module__", "") == rules.numpy.__name__  # `.item()`: no NumPy function of its own
        if own or _spelling(fn) and _spelling(fn).startswith("np."):  # array methods (not a dict's `.values()`)
            groups.setdefault("methods" + " discrete" * PRIMITIVES[fn].discrete, set()).add("." + name)
    return groups


def test_language_page_lists_the_registered_functions():
    listed_by_page, registry = _page_lists(), _registry_lists()
    for group in sorted(set(listed_by_page) | set(registry)):
        listed, known = listed_by_page.get(group, set()), registry.get(group, set())
        if group.startswith(("np", "scipy")):  # as objects: `abs` and `absolute` are one
            listed = {_function(np if group.startswith("np") else scipy, word) for word in listed}
            name = {fn: _spelling(fn) for fn in known | listed}
            missing, extra = {name[fn] for fn in known - listed}, {name[fn] for fn in listed - known}
        else:
            missing, extra = known - listed, listed - known
        assert not missing, f"docs/language.md does not list as {group}: {sorted(missing)}"
        assert not extra, f"docs/language.md lists as {group}, but the registry has not: {extra}"


def _function(module: object, word: str) -> object:
    fn = module
    for part in word.split("."):
        fn = getattr(fn, part)
    return fn


# ====================================================================== singular points


def _grad(source: str, x: np.ndarray) -> np.ndarray:
    f = load_function(f"import numpy as np\n\n\ndef f(x):\n    return {source}\n", "singular")
    return chad.grad(f)(x)


@pytest.mark.parametrize(
    ("source", "x", "expected"),
    [
        # sort: the cotangent follows a stable sort's permutation (the first of tied elements takes the first place)
        ("np.sum(np.sort(x) * np.array([1.0, 2.0, 3.0]))", [2.0, 1.0, 2.0], [2.0, 1.0, 3.0]),
        # median: the middle element(s) of a stable sort, d/2 each when the count is even
        ("np.median(x)", [1.0, 1.0, 1.0], [0.0, 1.0, 0.0]),
        ("np.median(x)", [3.0, 1.0, 3.0, 0.0], [0.5, 0.5, 0.0, 0.0]),
        # max, and ptp = max - min: split equally among ties; a constant group gets 0
        ("np.ptp(x)", [1.0, 3.0, 3.0, 0.0], [0.0, 0.5, 0.5, -1.0]),
        ("np.ptp(x)", [2.0, 2.0], [0.0, 0.0]),
        ("np.linalg.norm(x, np.inf)", [-2.0, 1.0, 2.0], [-0.5, 0.0, 0.5]),
        # std and norms at 0: 0 (the subgradient of smallest norm)
        ("np.std(x)", [1.5, 1.5], [0.0, 0.0]),
        ("np.linalg.norm(x)", [0.0, 0.0], [0.0, 0.0]),
        ("np.linalg.norm(x, 1)", [0.0, -1.0], [0.0, -1.0]),
        # cumprod is exact at zeros
        ("np.sum(np.cumprod(x))", [2.0, 0.0, 3.0], [1.0, 2.0 + 6.0, 0.0]),
    ],
)
def test_what_chadpy_returns_at_singular_points(source, x, expected):
    np.testing.assert_allclose(_grad(source, np.array(x)), expected, err_msg=source)


# ====================================================================== tangent rules (forward mode)


def _tangent_cases():
    for name, op, write, sample, shapes in _sampled_calls():
        # the whole suite tries every sample on every broadcasting shape; the development subset each rule's first
        # sample as written (the VJP test above tries every sample)
        first = name.endswith("-0-" + "-".join(map(str, shapes))) and not any(s is not None for s in shapes)
        yield pytest.param(op, write, sample, shapes, id=name, marks=[] if first else [pytest.mark.slow])


@pytest.mark.parametrize(("op", "write", "sample", "shapes"), list(_tangent_cases()))
def test_tangent_rule_matches_finite_differences_and_the_vjp(op, write, sample, shapes):
    """Forward mode: the tangent of a call along a random direction is within 1e-5 of central differences along
    it, and <jvp(v), w> = <v, vjp(w)> for a random output cotangent w (the dot-product test)."""
    rng = np.random.default_rng(1)
    f, args, written = _call(write, sample, shapes, rng, np.float64, "tangent")
    # positions, masks, counts: no tangent (jvp refuses one other than zero)
    tangents = tuple(None if _discrete(a) else _like(a, rng) for a in args)
    value, tangent = chad.jvp(f, args, tangents)
    where = f"{write(written)} along a random direction"
    assert_close(_floats(value), _floats(f(*args)), 1e-12, 1e-12, where + ": the value")
    eps = 1e-6
    plus = f(*_moved(args, tangents, eps))
    minus = f(*_moved(args, tangents, -eps))
    assert_close(_floats(tangent, value), _difference(plus, minus, 2 * eps), 1e-5, 1e-6, where)
    w = _like(value, rng)
    _, pullback = chad.vjp(f, *args)
    cts = pullback(w)
    lhs = inner(tangent, w)
    rhs = sum(inner(t, ct) for t, ct, a in zip(tangents, cts, args) if ct is not None)
    assert abs(lhs - rhs) <= 1e-9 * (1 + abs(lhs)), f"{where}: <jvp(v), w> = {lhs} but <v, vjp(w)> = {rhs}"


def _discrete(value: object) -> bool:
    return isinstance(value, (int, np.integer, np.bool_)) or isinstance(value, np.ndarray) and value.dtype.kind in "iub"


def _moved(args: list, tangents: tuple, eps: float) -> list:
    """The arguments moved by eps along the tangents (lists element by element)."""
    out = []
    for a, t in zip(args, tangents):
        if t is None:  # positions, masks: no tangent
            out.append(a)
        elif isinstance(a, list):
            out.append([x + eps * d for x, d in zip(a, t)])
        else:
            out.append(a + eps * np.asarray(t) if isinstance(a, np.ndarray) else a + eps * t)
    return out


def _difference(plus: object, minus: object, width: float) -> object:
    """Central differences of a result, part by part (None for a discrete part: a rank, a flag)."""
    if isinstance(plus, (tuple, list)):
        return [_difference(p, m, width) for p, m in zip(plus, minus)]
    if isinstance(plus, np.ndarray):
        return np.asarray((plus - minus) / width) if plus.dtype.kind in "fc" else None
    if isinstance(plus, (bool, int, np.integer, np.bool_)):
        return None
    return (plus - minus) / width


def _floats(value: object, like: object = None) -> object:
    """A result's float parts as they are, its tuples as lists, its discrete parts None (a tangent's discrete
    parts: None too, by the value `like` it belongs to)."""
    like = value if like is None else like
    if isinstance(like, (tuple, list)):
        return [_floats(v, k) for v, k in zip(value, like)]
    if isinstance(like, np.ndarray) and like.dtype.kind not in "fc" or isinstance(like, (bool, int, np.integer)):
        return None
    return value
