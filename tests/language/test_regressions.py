"""Regression tests: every reproducer of the correctness issue ("never a wrong gradient, never a
crash"), each checked against central finite differences (or, where chadpy cannot differentiate
the program, a clear `ChadError` at the user's line).
"""

from __future__ import annotations

import functools
import importlib.util
import math
import re
import traceback

import numpy as np
import pytest
import scipy.special

import chadpy as chad
from tests.support.fd import assert_close, assert_grad_matches_fd, central_diff
from tests.support.located import assert_located

# ====================================================================== 1. values without types


def data_array_times_sum(ws, x):
    s = sum(ws)
    return s**2 + np.sum(s * x)


def unused_array_of_a_list_sum(x3):
    values = []
    values.append(x3)
    v = sum(values)
    unused = np.ones(4) * v  # noqa: F841  (typed as an array; it used to make v an array too)
    return v


def float_times_data_array(a, x):
    return np.sum(a * x)


def numpy_scalar_loop(a, w):
    s = 0.0
    for i in range(len(a)):
        s = s + a[i] * a[i] * w
    return s


def float_or_numpy_scalar(x, v):
    if x > 0.0:
        return x * 2.0
    return np.sum(v) * x


def test_a_float_times_a_data_array_is_an_array():
    assert_grad_matches_fd(data_array_times_sum, ([0.5, 0.5], np.array([1.0, 2.0, 3.0])), argnums=0)
    assert chad.grad(data_array_times_sum)([0.5, 0.5], np.array([1.0, 2.0, 3.0])) == [8.0, 8.0]


def test_an_unused_array_does_not_change_a_float_gradient():
    assert_grad_matches_fd(unused_array_of_a_list_sum, (-0.9,))
    assert chad.grad(unused_array_of_a_list_sum)(-0.9) == 1.0


def test_gradient_with_respect_to_a_float_times_a_data_array():
    assert_grad_matches_fd(float_times_data_array, (0.5, np.linspace(0, 1, 4)), argnums=0)
    assert chad.grad(float_times_data_array, argnums=0)(0.5, np.linspace(0, 1, 4)) == pytest.approx(2.0)


def test_numpy_scalars_are_floats_in_loops():
    a = np.array([0.3, -1.2, 0.7])
    assert_grad_matches_fd(numpy_scalar_loop, (a, 0.8), argnums=(0, 1))
    code = chad.source(numpy_scalar_loop, a, 0.8, annotate=False)
    assert "dense(" not in code and "unbroadcast(" not in code  # no array code for scalar arithmetic


@pytest.mark.parametrize("x", [0.7, -0.7])
def test_a_python_float_on_one_path_and_a_numpy_scalar_on_another_is_a_float_output(x):
    assert_grad_matches_fd(float_or_numpy_scalar, (x, np.array([1.0, 2.0])), argnums=0)


# ====================================================================== 2-4. defaults, nested lists, sorted dicts


def recursive_nested_default(x):
    def g(t, m=3):
        if m <= 0:
            return t
        return g(t, m - 1)

    return g(x)


def nested_list_array(x):
    return np.sum(np.array([[x, x], [x, x]]))


def nested_list_rows(x, y):
    m = np.array([[x, y * y], [np.sin(x), 2.0]])
    return np.sum(m @ m)


def sorted_dict_keys(x):
    d = {"b": np.array([x, 2 * x]), "a": np.array([x])}
    total = 0.0
    for k in sorted(d):
        total = total + np.sum(np.sin(d[k]))
    return total


def test_recursive_nested_function_keeps_its_defaults():
    assert_grad_matches_fd(recursive_nested_default, (0.5,))


def test_array_of_a_nested_list():
    assert_grad_matches_fd(nested_list_array, (0.5,))
    assert chad.grad(nested_list_array)(0.5) == 4.0
    assert_grad_matches_fd(nested_list_rows, (0.5, -1.3), argnums=(0, 1))


def test_sorted_of_a_dict_iterates_its_keys():
    assert_grad_matches_fd(sorted_dict_keys, (0.5,))


# ====================================================================== 5. decorated functions and derivatives


def fourth_power(x):
    return x**4


def negated(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return -fn(x)

    return wrapper


@negated
def negated_cube(x):
    return x**3


def calls_a_derivative(x):
    return DERIVATIVE(x) * x


DERIVATIVE = chad.grad(fourth_power)


def test_a_wraps_decorator_is_differentiated_as_called():
    assert_grad_matches_fd(negated_cube, (2.0,))
    assert chad.grad(negated_cube)(2.0) == -12.0


@pytest.mark.parametrize("make", [lambda: chad.grad(chad.grad(fourth_power)), lambda: chad.grad(calls_a_derivative)])
def test_grad_of_a_derivative_is_a_clear_error(make):
    with pytest.raises(chad.ChadError, match="grad of grad"):
        make()(2.0)


# ====================================================================== 6-9. the API


def expit_twice(x):
    return scipy.special.expit(x) * 2.0


def expit_sum(v):
    return np.sum(scipy.special.expit(v))


@pytest.fixture
def expit_rule():
    builtin = chad.rules.registry.PRIMITIVES.pop(scipy.special.expit, None)  # a user rule replaces chadpy's
    chad.defvjp(scipy.special.expit, lambda d, y, x: [d * y * (1 - y)])
    yield
    del chad.rules.registry.PRIMITIVES[scipy.special.expit]
    if builtin is not None:
        chad.rules.registry.PRIMITIVES[scipy.special.expit] = builtin


def test_defvjp_of_a_ufunc(expit_rule):
    assert_grad_matches_fd(expit_twice, (0.3,))
    assert_grad_matches_fd(expit_sum, (np.array([0.1, -0.2, 2.0]),))


def with_dict_aux(x):
    return x * x, {"a": x, "b": [x, 2.0]}


def with_list_aux(x):
    return x * x, [x, 2.0 * x]


@pytest.mark.parametrize("fn", [with_dict_aux, with_list_aux])
def test_has_aux_of_any_structure(fn):
    g, aux = chad.grad(fn, has_aux=True)(0.3)
    assert g == pytest.approx(0.6) and aux == fn(0.3)[1]
    out, pullback, aux = chad.vjp(fn, 0.3, has_aux=True)
    assert out == pytest.approx(0.09) and pullback(1.0) == (pytest.approx(0.6),) and aux == fn(0.3)[1]


@pytest.mark.parametrize(("fn", "x"), [(math.sin, 0.3), (math.exp, -1.2), (np.sum, np.array([1.0, 2.0, 3.0]))])
def test_grad_of_a_primitive(fn, x):
    assert_close(chad.grad(fn)(x), central_diff(fn, (x,), 0))


def test_vjp_of_a_primitive():
    x = np.array([0.3, -1.0])
    y, pullback = chad.vjp(np.tanh, x)
    assert_close(y, np.tanh(x))
    assert_close(pullback(np.ones(2))[0], 1.0 - np.tanh(x) ** 2)


@pytest.mark.parametrize("value", [42, "f", None])
def test_grad_of_a_non_function_is_a_clear_error(value):
    with pytest.raises(chad.ChadError, match="differentiates functions"):
        chad.grad(value)


class Model:
    def __init__(self, scale):
        self.scale = scale

    @chad.reverse
    def predict(self, x):
        return x * 2.0 + math.sin(x)

    def loss(self, x, y):
        return (x - y) ** 2 * 3.0


def test_reverse_on_a_method():
    m = Model(1.5)
    assert m.predict(0.5) == 0.5 * 2.0 + math.sin(0.5)
    assert m.predict.grad(0.5) == pytest.approx(2.0 + math.cos(0.5))
    assert Model.predict(m, 0.5) == m.predict(0.5)


def test_grad_of_a_bound_method():
    m = Model(1.5)
    assert chad.grad(m.loss, argnums=(0, 1))(1.0, 0.25) == (pytest.approx(4.5), pytest.approx(-4.5))


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


# ====================================================================== 11. false rejections


def append_with_break(x, n):
    values = []
    for i in range(n):
        if i > 2:
            break
        values.append(x * i)
    return sum(values)


def comprehension_in_one_branch(x):
    if x > 0:
        t = sum([y * 2 for y in [x, x]])
    else:
        t = x
    y = t * 3
    return y


def sum_passed_to_a_call_in_a_loop(a, b):
    total = 0.0
    for _ in range(3):
        s = a + b
        total = total + math.sin(s)
        a = s * 0.5
    return total


def list_sum_passed_to_a_call_in_a_loop(a, b):
    total = 0.0
    for k in range(3):
        s = [a * k] + [b]
        total = total + sum(s)
    return total


def test_appending_in_a_loop_with_break():
    assert_grad_matches_fd(append_with_break, (0.5, 5))
    assert chad.grad(append_with_break)(0.5, 5) == 3.0


def test_a_comprehension_variable_is_not_the_functions():
    assert_grad_matches_fd(comprehension_in_one_branch, (0.5,))
    assert_grad_matches_fd(comprehension_in_one_branch, (-0.5,))


def test_values_passed_to_calls_in_loops():
    assert_grad_matches_fd(sum_passed_to_a_call_in_a_loop, (0.3, 0.4), argnums=(0, 1))
    assert_grad_matches_fd(list_sum_passed_to_a_call_in_a_loop, (0.3, 0.4), argnums=(0, 1))


# ====================================================================== 12-13. arguments and kinds of rules


def matrix_one_norm(a):
    return np.linalg.norm(a, 1)


def vector_three_norm(x):
    return np.linalg.norm(x, 3)


def vector_norm_by_keyword(x):
    return np.linalg.norm(x, axis=0) + np.linalg.norm(x, None, 0, False)


def power_of_aranges(x):
    return np.sum(x ** np.arange(4))


def array_to_float_power(v, p):
    return np.sum(np.abs(v) ** p)


def sort_by_mergesort(x):
    return np.sum(np.sort(x, kind="mergesort") * np.arange(2.0))


@pytest.mark.parametrize(("fn", "x"), [(matrix_one_norm, np.eye(2) + 0.5), (vector_three_norm, np.array([1.0, -2.0]))])
def test_a_positional_argument_is_bound_as_numpy_binds_it(fn, x):
    """`np.linalg.norm(a, 1)` is `ord=1` (a matrix 1-norm), never `axis=1`."""
    assert_grad_matches_fd(fn, (x,))


def test_an_argument_chadpy_does_not_handle_is_an_error_not_another_parameter():
    with pytest.raises(chad.UnsupportedSyntax) as info:
        chad.grad(sort_by_mergesort)(np.array([1.0, -2.0]))
    assert "`kind`" in info.value.message
    assert_located(str(info.value), sort_by_mergesort, 'return np.sum(np.sort(x, kind="mergesort") * np.arange(2.0))')


def test_arguments_bound_by_the_real_signature():
    assert_grad_matches_fd(vector_norm_by_keyword, (np.array([1.0, -2.0, 0.5]),))


def test_power_with_a_float_base_and_an_array_exponent():
    assert_grad_matches_fd(power_of_aranges, (0.5,))
    assert chad.grad(power_of_aranges)(0.5) == pytest.approx(2.75)
    assert_grad_matches_fd(array_to_float_power, (np.array([0.5, -1.5]), 2.5), argnums=(0, 1))


# ====================================================================== 14. Python's in-place semantics


def view_augmented(a):
    h = a[:2]
    h *= 3
    return np.sum(a)


def argument_augmented(a, z):
    a += z
    return np.sum(a)


def owned_accumulator(v):
    s = np.zeros(3)
    for i in range(2):
        s += v * i
    return np.sum(s * s)


def owned_copy_then_update(v):
    b = v * 1.0
    c = b
    c += 1.0
    return np.sum(c * c)


def row_read_then_update(v):
    acc = np.ones((3, 2)) * 0.9
    s = 1.0
    for _ in range(3):
        acc += np.outer(v, v)[:, :2]
        s = s * math.sin(acc[-2][-2])  # a view of a row, dead after this line
    return s + np.sum(acc)


def view_through_a_swap(v, w):
    a = v * 1.0
    b = w * 1.0
    view = a[1:]
    a, b = b, a
    b += 1.0  # b is the old a: the view sees this
    return np.sum(view * view) + np.sum(a)


def update_after_a_swap(v, w):
    a = v * 1.0
    b = w * 1.0
    a, b = b, a
    b += a
    return np.sum(b * b)


def update_after_a_branch(v, c):
    if c > 0.0:
        a = v * 2.0
    else:
        a = v * 3.0
    a *= a
    return np.sum(a)


def update_after_stacking(v):
    a = v * 1.0
    both = np.stack([a, a], axis=1)  # the list is gone after this line; np.stack copies
    a += 1.0
    return np.sum(both * a[:, None])


def update_of_an_advanced_index_copy(v):
    a = v[np.array([2, 0])]  # a copy, not a view
    a *= 3.0
    return np.sum(a * a) + np.sum(v)


def update_while_a_list_holds_it(v):
    a = v * 1.0
    held = [a]
    a += 1.0
    return np.sum(held[0])


def update_while_a_tuple_holds_it(v):
    a = v * 1.0
    pair = (a, 2.0)
    a *= 2.0
    return np.sum(pair[0]) + np.sum(a)


def reads_only(a, w):
    return np.sum(a * w)


def keeps_it(a, w):
    return (a, w)


def update_after_a_call_that_reads(v, w):
    a = v * 1.0
    s = reads_only(a, w)
    a += s
    return np.sum(a * a)


def update_after_a_call_that_keeps(v, w):
    a = v * 1.0
    kept = keeps_it(a, w)
    a += 1.0
    return np.sum(kept[0])


def is_float(v):
    return v * 2.0 if isinstance(v, float) else v


@pytest.mark.parametrize(
    ("fn", "args", "line"),
    [
        (view_augmented, (np.ones(3),), "h *= 3"),
        (argument_augmented, (np.ones(3), 1.0), "a += z"),
        (view_through_a_swap, (np.ones(3), np.ones(3)), "b += 1.0  # b is the old a: the view sees this"),
        (update_while_a_list_holds_it, (np.ones(3),), "a += 1.0"),
        (update_while_a_tuple_holds_it, (np.ones(3),), "a *= 2.0"),
        (update_after_a_call_that_keeps, (np.ones(3), 0.5), "a += 1.0"),
    ],
)
def test_an_in_place_update_another_name_may_see_is_an_error(fn, args, line):
    with pytest.raises(chad.UnsupportedSyntax) as info:
        chad.grad(fn)(*args)
    assert "in place" in info.value.message
    assert_located(str(info.value), fn, line)


def test_an_in_place_update_nobody_else_sees_is_fine():
    v = np.array([0.5, -1.0, 2.0])
    assert_grad_matches_fd(owned_accumulator, (v,))
    assert_grad_matches_fd(owned_copy_then_update, (v,))
    assert_grad_matches_fd(row_read_then_update, (v,))
    assert_grad_matches_fd(update_after_a_swap, (v, v[::-1] * 0.5), argnums=(0, 1))
    assert_grad_matches_fd(update_after_a_branch, (v, 1.0))
    assert_grad_matches_fd(update_after_a_branch, (v, -1.0))
    assert_grad_matches_fd(update_after_stacking, (v,))
    assert_grad_matches_fd(update_of_an_advanced_index_copy, (v,))
    assert_grad_matches_fd(update_after_a_call_that_reads, (v, 0.5), argnums=(0, 1))


def test_isinstance_with_a_builtin_type():
    assert chad.grad(is_float)(1.5) == 2.0


# ====================================================================== messages


def helper_with_a_with(x):
    with open(__file__):
        return x


def calls_the_helper(x):
    return helper_with_a_with(x) * 2.0


def square_root(x):
    return math.sqrt(x) * 2.0


def test_an_error_in_a_callee_names_the_users_call():
    with pytest.raises(chad.UnsupportedSyntax) as info:
        chad.grad(calls_the_helper)(1.0)
    message = str(info.value)
    assert_located(message, calls_the_helper, "return helper_with_a_with(x) * 2.0")
    assert_located(message, helper_with_a_with, "with open(__file__):")


def test_api_misuse_names_the_users_line():
    with pytest.raises(chad.ChadError) as info:
        chad.grad(square_root, argnums=3)(1.0)
    assert info.value.loc is not None and info.value.loc.filename == __file__
    assert "argnums=3" in info.value.loc.line


def _chadpy_frames(error: BaseException) -> list[str]:
    files = [frame.filename for frame in traceback.extract_tb(error.__traceback__)]
    return [f for f in files if f.startswith(chad.__path__[0])]


def test_tracebacks_leave_out_chadpys_frames(monkeypatch):
    monkeypatch.delenv("CHADPY_TRACEBACK", raising=False)
    with pytest.raises(ZeroDivisionError) as info:
        chad.grad(square_root)(0.0)  # d/dx sqrt at 0: a float division by zero in the backward pass
    assert len(_chadpy_frames(info.value)) == 1  # the entry point's `raise`, whose line says how to see them
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "return math.sqrt(x) * 2.0" in notes and __file__ in notes
    monkeypatch.setenv("CHADPY_TRACEBACK", "full")
    with pytest.raises(ZeroDivisionError) as info:
        chad.grad(square_root)(0.0)
    assert len(_chadpy_frames(info.value)) > 1  # the gradient function's call of the derivative too


def update_keeps_the_layout(x):
    a = np.transpose(np.ones((2, 3)) * 1.25) * 1.0  # Fortran order
    for _ in range(5):
        a += np.tanh(np.array([[x, np.max(a)], [x * 0.5, -1.5], [x, 0.5]]) * x)
    return np.mean(a**2)


def test_an_update_leaves_the_array_laid_out_as_python_does():
    """`a += b` on a Fortran-ordered array keeps its order, and NumPy's pairwise sum depends on it: the
    derivative's value equals the function's to the last bit (found by the random-program test, seed 4048)."""
    for x in np.linspace(-1.0, 1.0, 41):
        value, _ = chad.value_and_grad(update_keeps_the_layout)(float(x))
        assert value == update_keeps_the_layout(float(x))
    assert_grad_matches_fd(update_keeps_the_layout, (0.3,))


def tail_sum(xs, n):
    return sum(xs[-n:]) + sum(xs[: -n + 1])


def test_a_slice_bound_negating_a_local_variable():
    """`xs[-n:]` with `n` a parameter was read as a literal bound, in an empty scope: "local variable `n`
    may be used before it is assigned" (found while splitting the lowerer, issue 13)."""
    assert_grad_matches_fd(tail_sum, ([1.0, 2.0, 3.0, 4.0], 2))
    assert chad.grad(tail_sum)([1.0, 2.0, 3.0, 4.0], 2) == [1.0, 1.0, 2.0, 1.0]  # [3, 4] and [1, 2, 3]


def test_a_function_without_a_module(tmp_path):
    """A function exec'd in a namespace without `__name__` has `__module__` None: chadpy raised
    AttributeError deciding whether it was one of its own (found writing docs/design.md's test)."""
    path = tmp_path / "no_module.py"
    path.write_text("def cube(x):\n    return x * x * x\n")
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    assert namespace["cube"].__module__ is None
    assert chad.grad(namespace["cube"])(2.0) == 12.0


def sum_sorted_squares(xs):
    return sum([v * v for v in sorted(xs)])


def test_a_desugared_loop_is_located_at_its_own_line():
    """The loop `sorted(xs)` hides was shown under the `def` line: the element it writes had no location
    (found reading the golden files, issue 13). Every statement's line is now the user's `return` line."""
    source = chad.source(sum_sorted_squares, [1.0, 3.0, 2.0])
    lines = {m for m in re.findall(r"# line (\d+):", source)}
    assert lines == {str(sum_sorted_squares.__code__.co_firstlineno + 1)}


def def_after_a_continue(x):
    s = 0.0
    k = 0
    while k < 3:
        k += 1
        if s < x:
            s = s + x
        elif s < 2 * x:
            s = s * 0.5
        else:
            continue

        def scaled(q):
            return q * s  # noqa: B023  called right away, before s changes

        s = scaled(1.0)
    return s


def test_a_def_lowered_on_several_paths_gets_a_name_on_each():
    """A `def` after an `if`/`elif` with a `continue` is lowered once per path; its name is not a gast
    Name, so the name supply handed the same SSA name out twice (the IR verifier caught it, random-program
    seeds 84, 921, ...). f(x) = 1.5 x."""
    assert chad.grad(def_after_a_continue)(0.7) == 1.5
    assert_grad_matches_fd(def_after_a_continue, (0.7,))


class _Signed:
    def __init__(self, w, b):
        self.w = w
        if b > 0:  # the last statement: `self` is read after it only by the constructor's return
            self.b = b
        else:
            self.b = -b


def signed_product(w, b):
    s = _Signed(w, b)
    return s.w * s.b


def test_an_if_ending_an_init_keeps_its_attribute_assignments():
    """An `if` that is the last statement of `__init__` did not join `self` (nothing after it read it:
    the constructor's implicit `return self` was not counted), so `self.b` was lost: an error reading
    `s.b`, where a wrong join would have been a wrong gradient. d/db (w |b|) = w sign(b)."""
    assert_grad_matches_fd(signed_product, (1.5, -0.5), argnums=(0, 1))


def slice_in_a_variable(xs):
    s = slice(1, None)
    rest = xs[s]
    return rest[0] * rest[1]


def test_a_list_indexed_by_a_slice_in_a_variable_is_a_slice():
    """`xs[s]` for a slice object `s` was typed as an element (\"cannot index a float\" at `rest[0]`), and
    its rule would have made a one-hot cotangent keyed by the slice. f(xs) = xs[1] xs[2]."""
    assert chad.grad(slice_in_a_variable)([1.0, 2.0, 3.0]) == [0.0, 3.0, 2.0]
    assert_grad_matches_fd(slice_in_a_variable, ([1.0, 2.0, 3.0],))


class _Scaler:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return self.k * x * x

    def total(self, x):
        return self.k + x


_SCALER = _Scaler(1.5)


def calls_an_outside_callable_object(x):
    return _SCALER(x) + _SCALER.total(x) * _SCALER.k


def test_an_outside_object_with_call_is_data_and_callable():
    """A module-level object whose class has `__call__` was taken for a function (`callable`), so
    `O(x)`, `O.total(x)` and `O.k` were all rejected (random programs with outside_callable).
    f(x) = 1.5 x^2 + 1.5 (1.5 + x): f'(x) = 3 x + 1.5."""
    assert_grad_matches_fd(calls_an_outside_callable_object, (0.8,))


class _Pair:
    def __init__(self, a, b):
        self.a = a
        self.b = b


def _make_in_a_loop(t):
    for _ in range(3):
        return _Pair(t, 2.0 * t)
    return _Pair(t, t)


def reads_a_record_returned_in_a_loop(x):
    return _make_in_a_loop(x).b * x


def test_a_value_none_only_in_an_early_round_of_inference_is_not_an_error():
    """A function returning from inside a loop and after it is None-typed in an early round of inference
    (the loop's return value was not known yet), and reading `.b` of it raised at once instead of waiting
    for the final round (random programs, objects=1, seeds 27, 401, ...). f(x) = 2 x^2."""
    assert_grad_matches_fd(reads_a_record_returned_in_a_loop, (0.7,))


def updates_an_object_it_made(x):
    ob = _Pair(x, 2.0)
    ob.a = ob.a * 3.0
    return ob.a * ob.b


def test_an_object_made_by_a_constructor_is_owned_by_its_caller():
    """A record built from its arguments counted as referring to them, so the caller did not own the
    object its constructor returned and `ob.a = ...` was rejected as an update others may see.
    f(x) = 6 x."""
    assert_grad_matches_fd(updates_an_object_it_made, (0.7,))


def enumerates_and_zips_a_dict(d, xs):
    s = 0.0
    for i, k in enumerate(d):
        s = s + i * d[k]
    for k, x in zip(d, xs):
        s = s + d[k] * x
    return s


def test_enumerate_and_zip_of_a_dict_yield_its_keys():
    """`enumerate(d)` and `zip(d, ...)` read each dict at position k (`d[0]`): a run-time KeyError,
    not a ChadError. They iterate the dict's keys, as `for k in d` does."""
    assert_grad_matches_fd(enumerates_and_zips_a_dict, ({"a": 1.0, "b": 2.0}, [3.0, 4.0]), argnums=(0, 1))


def std_of_equal_numbers(v):
    b = np.prod(v)
    return np.std(np.array([b, b, b])) + 1.0


def test_std_of_numbers_equal_up_to_rounding_has_the_zero_subgradient():
    """The mean of three equal numbers can be an ulp off them; std's rule divided that rounding by a std of
    order 1e-17 and gave O(1) noise (random programs, seed 675). std is constant along this input: 0."""
    v = np.array([-0.946263411317406, 1.4116901384745093])
    assert np.all(chad.grad(std_of_equal_numbers)(v) == 0.0)
    assert_grad_matches_fd(std_of_equal_numbers, (v,))


def updates_parts_of_numpy_tuples(x):
    frac = np.modf(x * 0.3)[0]
    frac += np.tanh(frac)
    w, v = np.linalg.eigh(np.outer(x, x) + np.eye(2))
    v *= 2.0
    return np.sum(frac) + np.sum(w) + np.sum(v * v)


def updates_a_part_still_read_through_its_tuple(x):
    t = np.modf(x * 0.3)
    frac = t[0]
    frac += 1.0
    return np.sum(t[0]) + np.sum(frac)


def test_a_part_of_a_numpy_tuple_result_is_owned():
    """`np.modf(...)[0]`, `w, v = np.linalg.eigh(a)`: each part is a new array, but a part read out of a
    tuple result was not owned, so `frac += ...` on it was rejected (random programs, seed 819). Updating
    one while the tuple is still read stays rejected."""
    assert_grad_matches_fd(updates_parts_of_numpy_tuples, (np.array([0.4, 0.7]),))
    with pytest.raises(chad.UnsupportedSyntax, match="in place"):
        chad.grad(updates_a_part_still_read_through_its_tuple)(np.array([0.4, 0.7]))


def product_then_appended(x):
    xs = [x, 2.0 * x]
    p = math.prod(xs)
    xs.append(3.0)
    return p + xs[2]


def test_a_rule_reading_a_list_sees_it_as_it_was_before_a_later_append():
    """`math.prod(xs)`'s derivative read `xs` when the backward pass ran, after `xs.append(3.0)`: a gradient
    3x too large (f(x) = 2 x^2 + 3, f' = 4 x). The user's appends are logged and rewound (`buffers.py`)."""
    assert_grad_matches_fd(product_then_appended, (1.5,))


def augments_a_copy_of_a_free_variable(x):
    y = x * 2.0

    def g(t):
        s = y
        s += y * t
        return s

    return g(x)


def test_augmenting_a_copy_of_an_outside_name_does_not_make_it_local():
    """`s = y; s += ...` in a nested function, y from outside: `copies.py` wrote `y.__updated_by__(s)`
    after the update, which made y a local of g ("used before it is assigned"; random programs, seed 307).
    Only the function's own names are settled after an update."""
    assert_close(chad.grad(augments_a_copy_of_a_free_variable)(0.7), 2.0 + 4.0 * 0.7)


def copy_read_where_its_original_is_shadowed(x):
    y = x * 2.0
    z = y
    return sum(math.tanh(z) * y for y in [x, 1.0])


def test_a_copy_is_not_replaced_where_a_comprehension_shadows_its_original():
    """`z = y; sum(f(z) for y in ...)`: `copies.py` made `z` inside the generator its own `y`, the
    generator's variable, not the function's (a wrong value; random programs, seed 6282)."""
    f = copy_read_where_its_original_is_shadowed
    assert_close(chad.value_and_grad(f)(0.4)[0], f(0.4))
    assert_grad_matches_fd(f, (0.4,))
