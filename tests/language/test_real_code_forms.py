"""Forms real code takes (issue 37): decorators with `*args, **kwargs`, caches, class-level methods,
`super().__init__`, frozen SciPy distributions, dtypes, `~`, starred targets, lists given to NumPy, logging,
`.tolist()`, `np.vectorize`, `operator`. Code through which no derivative flows runs as Python runs it; each
gradient is checked against central differences, each side effect against the plain call's, each refusal is a
`ChadError` naming the line."""

from __future__ import annotations

import functools
import logging
import operator
import random
import types

import numpy as np
import pytest
import scipy.stats

import chadpy as chad
from chadpy.errors import ChadError, ChadTypeError, UnknownFunction
from tests.support.fd import assert_close, assert_grad_matches_fd, central_diff
from tests.support.located import assert_located

X = np.array([0.3, -0.4, 1.2])
LOG = logging.getLogger("tests.real_code_forms")

# ====================================================================== 1. functools.wraps, *args, **kwargs


def counted(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        wrapper.calls += 1
        return fn(*args, **kwargs)

    wrapper.calls = 0
    return wrapper


def scaled(k):
    def decorate(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            return k * fn(*args, **kwargs)

        return inner

    return decorate


@counted
def wrapped_loss(x, s):
    return np.sum((x - s) ** 2)


@counted
@scaled(2.0)
def stacked_loss(x, s, p=2.0, *, w=1.0):
    return w * np.sum(np.abs(x - s) ** p)


def uses_stacked(x, s):
    return stacked_loss(x, s) + stacked_loss(x, s=s, w=0.5) + stacked_loss(x, 0.1, 3.0)


def test_a_wraps_decorator_with_star_parameters_is_differentiated_through():
    """`inspect.signature` follows `__wrapped__`; chadpy binds the wrapper's own `(*args, **kwargs)` (it bound
    f's `(x, s)` to them: an AssertionError or a TypeError)."""
    assert_grad_matches_fd(wrapped_loss, (X, 0.5), argnums=(0, 1))
    dx, ds = chad.grad(wrapped_loss, argnums=(0, 1))(X, 0.5)
    assert_close(dx, 2 * (X - 0.5), 1e-12, 1e-12, "dx")
    value, dx = chad.value_and_grad(wrapped_loss)(X, s=0.5)  # s given by keyword: `**kwargs` fills it
    assert value == pytest.approx(wrapped_loss(X, 0.5))
    assert_close(dx, 2 * (X - 0.5), 1e-12, 1e-12, "dx")


def test_the_wrapper_keeps_its_state_as_the_plain_call_does():
    before = wrapped_loss.calls
    wrapped_loss(X, 0.5)
    assert wrapped_loss.calls == before + 1
    chad.grad(wrapped_loss)(X, 0.5)  # one forward pass: one call
    assert wrapped_loss.calls == before + 2


def test_stacked_decorators_spread_keywords_into_star_keywords():
    """`fn(*args, **kwargs)` into another wrapper's `**kwargs`, keywords and defaults of the innermost."""
    assert_grad_matches_fd(uses_stacked, (X, 0.25), argnums=(0, 1))
    before = stacked_loss.calls
    uses_stacked(X, 0.25)
    chad.grad(uses_stacked)(X, 0.25)
    assert stacked_loss.calls == before + 6


def r_too_many(x):
    return stacked_loss(x, 1.0, 2.0, 3.0)


def test_a_spread_call_that_does_not_bind_raises_pythons_type_error():
    with pytest.raises(TypeError):
        r_too_many(X)
    with pytest.raises(TypeError, match="too many positional arguments"):
        chad.grad(r_too_many)(X)


@counted
def square(z, p=2.0):
    return z**p


def uses_square_on_data(x):
    k = square(3.0)  # no derivative flows into this call: chad/calls.py runs the original
    return x * k


def test_a_decorated_function_called_on_data_runs_as_python_runs_it():
    assert_grad_matches_fd(uses_square_on_data, (0.5,))


# ====================================================================== 2. functools.lru_cache, functools.cache


@functools.lru_cache(maxsize=None)  # noqa: UP033  (the form real code has)
def constant_matrix(n):
    return np.eye(n) * 2.0 + 1.0


@functools.cache
def ramp(n):
    return np.arange(n) * 1.0


def uses_caches(x):
    return np.sum(constant_matrix(3) @ x) + np.sum(ramp(3) * x) + constant_matrix(int(len(x)))[0, 0]


def test_a_cached_helper_of_data_runs_as_it_is():
    assert_grad_matches_fd(uses_caches, (X,))
    before = constant_matrix.cache_info()
    chad.grad(uses_caches)(X)
    after = constant_matrix.cache_info()
    assert after.misses == before.misses and after.hits == before.hits + 2  # as the plain call: two hits


@functools.lru_cache
def cached_power(x):
    return x**3


def r_cached_on_derivative(x):
    return cached_power(x) + x


def test_a_cached_function_given_a_differentiated_value_is_refused():
    with pytest.raises(UnknownFunction, match="lru_cache") as info:
        chad.grad(r_cached_on_derivative)(1.5)
    assert_located(str(info.value), r_cached_on_derivative, "return cached_power(x) + x")


# ====================================================================== 3. classes: static, class methods, super


class SquaredError:
    weight = 3.0

    @staticmethod
    def loss(y, p):
        return np.sum((y - p) ** 2)

    @classmethod
    def weighted(cls, y):
        return cls.loss(y, 1.0) * cls.weight

    def halved(self, y):
        return y / 2.0


def through_the_class(x):
    return SquaredError.loss(x, 0.5) + SquaredError.weighted(x) + np.sum(SquaredError.halved(None, x))


def test_static_and_class_methods_called_through_the_class():
    """`Cls.static(x)`, `Cls.classmethod(x)`, `Cls.function(obj, x)` (was "attribute `.loss` ... not supported")."""
    assert_grad_matches_fd(through_the_class, (X,))


class Layer:
    def __init__(self, w):
        self.w = w
        self.gain = self.factor() * w  # the subclass's `factor`: the object is the subclass's

    def factor(self):
        return 1.0


class Dense(Layer):
    def __init__(self, w, b):
        self.b = b  # set before the parent's `__init__`: kept
        super().__init__(w * 2.0)
        self.c = self.b + self.w  # reads what the parent set

    def factor(self):
        return 3.0


class Deeper(Dense):
    def __init__(self, w):
        super().__init__(w, w * w)

    def out(self, x):
        return self.gain * x + self.c


def builds_with_super(x, w):
    return np.sum(Deeper(w).out(x)) + Dense(w, 1.0).gain


def test_super_init_fills_the_object_as_python_does():
    assert builds_with_super(X, 0.7) == pytest.approx(np.sum(Deeper(0.7).out(X)) + Dense(0.7, 1.0).gain)
    assert_grad_matches_fd(builds_with_super, (X, 0.7), argnums=(0, 1))


class CrossEntropy:
    """No `__init__`: `CrossEntropy()` has no attributes; a class attribute is read as data."""

    eps = 1e-12

    def __call__(self, y, p):
        return -np.sum(y * np.log(p + self.eps))

    def penalty(self, p):
        return np.sum(p**2)


def with_a_callable_object(p):
    f = CrossEntropy()
    return f(np.array([0.2, 0.3, 0.5]), p) + f.penalty(p)


def test_an_object_of_a_class_without_init_is_called_and_its_methods_too():
    """(was "no derivative rule for `call`")."""
    assert_grad_matches_fd(with_a_callable_object, (np.array([0.2, 0.3, 0.5]),))


# ====================================================================== 4. frozen SciPy distributions


class Likelihood:
    def __init__(self):
        self.dist = scipy.stats.norm(0, 1)

    def ll(self, x):
        return np.sum(self.dist.logpdf(x))


def made_inside(x):
    return Likelihood().ll(x)


OUTSIDE = Likelihood()  # its `dist` is SciPy's own frozen distribution
GAMMA = scipy.stats.gamma(2.0, scale=1.5)


def held_outside(x):
    return OUTSIDE.ll(x) + np.sum(GAMMA.logpdf(x + 2.0)) + GAMMA.logcdf(x[0] + 2.0)


def frozen_with_parameters(x, mu, sigma):
    d = scipy.stats.norm(mu, sigma)
    return np.sum(d.logpdf(x)) + d.cdf(0.1) + np.sum(d.pdf(x))


def t_and_mvn(x, df, mean):
    return np.sum(scipy.stats.t(df, loc=0.5).logpdf(x)) + scipy.stats.multivariate_normal(mean, np.eye(3)).logpdf(x)


def frozen_data_methods(x):
    d = scipy.stats.norm(0.0, 2.0)
    return np.sum(d.logpdf(x)) * d.std() + np.sum(d.rvs(size=3, random_state=0)) + d.ppf(0.3)


def test_a_frozen_distribution_held_by_an_object():
    assert_grad_matches_fd(made_inside, (X,))
    assert_grad_matches_fd(held_outside, (X,))


def test_a_frozen_distribution_made_inside_is_differentiated_in_its_parameters():
    assert_grad_matches_fd(frozen_with_parameters, (X, 0.2, 1.3), argnums=(0, 1, 2))
    assert_grad_matches_fd(t_and_mvn, (X, 3.0, np.array([0.1, 0.2, -0.1])), argnums=(0, 1, 2))


def test_its_other_methods_run_as_scipys():
    assert chad.value_and_grad(frozen_data_methods)(X)[0] == pytest.approx(frozen_data_methods(X))
    assert_grad_matches_fd(frozen_data_methods, (X,))


def r_mean_of_differentiated(mu):
    d = scipy.stats.norm(mu, 1.0)
    return d.mean()


NOT_A_DISTRIBUTION = types.SimpleNamespace(logpdf=np.negative)  # data with a `logpdf`


def r_logpdf_of_another_object(x):
    return np.sum(NOT_A_DISTRIBUTION.logpdf(x))


def test_methods_without_a_derivative_are_refused_where_one_flows_in():
    with pytest.raises(UnknownFunction, match=r"`\.mean`") as info:
        chad.grad(r_mean_of_differentiated)(0.3)
    assert_located(str(info.value), r_mean_of_differentiated, "return d.mean()")
    with pytest.raises(ChadError, match="frozen SciPy distribution") as info:
        chad.grad(r_logpdf_of_another_object)(X)
    assert_located(str(info.value), r_logpdf_of_another_object, "return np.sum(NOT_A_DISTRIBUTION.logpdf(x))")


# ====================================================================== 5. dtypes


def with_dtypes(x):
    z = np.zeros(3, dtype=x.dtype)
    e = np.eye(3, dtype=x.dtype) + np.identity(3, dtype=np.float64)
    f = np.full(3, 2.0, dtype=x.dtype)
    return np.sum(x.astype(x.dtype) * 2 + z) + np.sum(e @ x) + np.sum(f * x) + np.sum(np.full(3, x[0], dtype=x.dtype))


def test_dtype_of_an_array_and_dtype_arguments():
    assert_grad_matches_fd(with_dtypes, (X,))
    g32 = chad.grad(with_dtypes)(X.astype(np.float32))  # float32 stays float32, the same slopes
    assert g32.dtype == np.float32
    assert_close(g32.astype(np.float64), chad.grad(with_dtypes)(X), 1e-5, 1e-5, "float32")


# ====================================================================== 6. a module-level lambda


sq = lambda z: z * z  # noqa: E731


def calls_a_module_lambda(x):
    return sq(x) + 1.0


def test_a_module_level_lambda_called_in_an_expression():
    """Its name, `<lambda>`, named a temporary: a SyntaxError in the generated code."""
    assert_grad_matches_fd(calls_a_module_lambda, (1.5,))


# ====================================================================== 7. ~


def with_invert(x):
    m = x > 0
    k = 5
    return np.sum(x[~m]) + np.sum(x[m]) * (~k) + np.sum(x[~(x > 1.0)] ** 2)


def test_invert_of_a_mask_and_of_an_int():
    assert with_invert(X) == pytest.approx(chad.value_and_grad(with_invert)(X)[0])
    assert_grad_matches_fd(with_invert, (X,))


def r_invert_of_a_float(x):
    return ~x


def test_invert_of_a_float_is_a_clear_error():
    with pytest.raises(ChadTypeError, match="`~`") as info:
        chad.grad(r_invert_of_a_float)(1.0)
    assert_located(str(info.value), r_invert_of_a_float, "return ~x")


# ====================================================================== 8. starred targets


def starred_targets(theta):
    *w, s = theta
    first, *mid, last = w + [s]
    (p, *q), r = (theta[0], theta[1], theta[2]), s
    return np.sum(np.array(w)) * s + first * last + sum(mid) + p * sum(q) * r


def starred_rows(m):
    top, *rows = m
    return np.sum(top) * np.sum(np.array(rows) ** 2)


def test_starred_targets_of_an_array_a_list_and_a_tuple():
    assert_grad_matches_fd(starred_targets, (np.array([0.3, -0.2, 0.9, 1.1]),))
    assert_grad_matches_fd(starred_targets, ([0.3, -0.2, 0.9, 1.1],))
    assert_grad_matches_fd(starred_rows, (np.arange(6.0).reshape(3, 2) + 0.5,))


def r_too_short(t):
    a, *b, c = t
    return a


def test_too_few_values_raise_pythons_value_error():
    with pytest.raises(ValueError, match="not enough values to unpack"):
        r_too_short([1.0])
    with pytest.raises(ValueError, match="not enough values to unpack"):
        chad.grad(r_too_short)([1.0])


# ====================================================================== 9. lists given to NumPy


def lists_to_numpy(v):
    a = np.concatenate([[0.0], v])
    b = np.hstack([[1.0, 2.0], v])
    c = np.array([[0.0, 1.0], v[:2]])
    return np.sum(a**2) + np.sum(b[1:] * a) + np.sum(c**3)


def test_a_list_display_mixed_with_arrays_given_to_numpy():
    """(was "a variable holds values of different kinds (a list and an array)")."""
    assert_grad_matches_fd(lists_to_numpy, (X,))


# ====================================================================== 10. logging, print, str


def logs_and_prints(x):
    LOG.warning("x is %f", x)
    LOG.debug("%s", np.array([x, x]))
    print(x)
    s = "{:.3f}".format(x)  # noqa: UP032  (the form real code has)
    return x * 2.0 + len(s)


def test_logging_printing_and_formatting_run_on_the_primal_value(caplog, capsys):
    with caplog.at_level(logging.WARNING, logger=LOG.name):
        logs_and_prints(1.5)
        plain = (caplog.messages[:], capsys.readouterr().out)
        caplog.clear()
        assert chad.grad(logs_and_prints)(1.5) == 2.0
        assert (caplog.messages, capsys.readouterr().out) == plain == (["x is 1.500000"], "1.5\n")
    assert_grad_matches_fd(logs_and_prints, (1.5,))


RNG = np.random.default_rng(0)


def r_number_into_data(x):
    return x + RNG.normal(x, 1.0)


def r_list_into_data(xs):
    random.shuffle(xs)
    return xs[0]


def test_a_call_into_data_whose_result_may_carry_a_derivative_is_refused():
    """A float in, a float out: refused when it runs (the derivative through it is unknown), at its line."""
    with pytest.raises(UnknownFunction, match="returned float") as info:
        chad.grad(r_number_into_data)(1.0)
    assert_located(str(info.value), r_number_into_data, "return x + RNG.normal(x, 1.0)")


def test_a_call_into_data_that_may_change_a_differentiated_container_is_refused():
    with pytest.raises(ChadTypeError, match="may change in place") as info:
        chad.grad(r_list_into_data)([1.0, 2.0])
    assert_located(str(info.value), r_list_into_data, "random.shuffle(xs)")


# ====================================================================== 11. tolist, np.vectorize


def with_tolist(x):
    xs = x.tolist()
    rows = (np.outer(x, x) + 1.0).tolist()
    return xs[0] * xs[1] + xs[2] ** 2 + rows[1][2] * rows[0][0] + sum(xs)


def test_tolist_is_the_list_of_the_elements():
    assert_grad_matches_fd(with_tolist, (X,))


def softplus(z):
    return np.log1p(np.exp(z)) if z < 0 else z + np.log1p(np.exp(-z))


VECTORIZED = np.vectorize(softplus)


def with_vectorize(x):
    squared = np.vectorize(lambda z: z * z)  # kept in a variable: a function value
    return np.sum(np.vectorize(softplus)(x) * 2.0) + np.sum(squared(x)) + np.sum(VECTORIZED(x))


def test_np_vectorize_is_a_loop_over_the_elements():
    m = np.array([[0.3, -0.2], [0.9, -1.5]])
    assert chad.value_and_grad(with_vectorize)(m)[0] == pytest.approx(with_vectorize(m))
    assert_grad_matches_fd(with_vectorize, (m,))


def r_vectorize_options(x):
    return np.sum(np.vectorize(softplus, otypes=[float])(x))


def test_np_vectorize_with_options_is_a_clear_error():
    with pytest.raises(ChadError, match="np.vectorize") as info:
        chad.grad(r_vectorize_options)(X)
    assert_located(str(info.value), r_vectorize_options, "return np.sum(np.vectorize(softplus, otypes=[float])(x))")


# ====================================================================== 12. NumPy of sequences, operator


def numpy_of_sequences(a, b, c):
    return np.sum([a, b, c]) + np.mean([a, b]) + np.prod((a, b)) + np.max([a, b, c]) + np.min((a, c))


def numpy_of_arrays(u, v):
    parts = [u, v * 2.0]
    return np.sum(np.sum(parts, axis=0) ** 2) + np.sum(np.mean((u, v), axis=0)) + np.std([u[0], v[1]])


def with_operator(xs, ys):
    return functools.reduce(operator.mul, xs) + sum(map(operator.mul, xs, ys)) + functools.reduce(operator.add, ys)


def test_numpy_reductions_of_lists_and_tuples():
    assert_grad_matches_fd(numpy_of_sequences, (0.3, -0.7, 1.1), argnums=(0, 1, 2))
    assert_grad_matches_fd(numpy_of_arrays, (X, X[::-1] + 0.5), argnums=(0, 1))


def test_operator_functions_as_values():
    assert_grad_matches_fd(with_operator, ([1.1, 2.0, -0.5], [0.4, 0.5, 0.6]), argnums=(0, 1))


def r_sum_of_dicts(x):
    return sum([{"a": x}, {"a": 2.0 * x}])


def r_dicts_added(x):
    return ({"a": x} + {"b": 1.0})["a"]


def test_misused_dicts_raise_a_chad_error_or_pythons_own():
    for f, line in ((r_sum_of_dicts, 'return sum([{"a": x}, {"a": 2.0 * x}])'), (r_dicts_added, None)):
        with pytest.raises(TypeError):
            f(1.0)  # the plain call
        with pytest.raises((ChadError, TypeError)) as info:
            chad.grad(f)(1.0)
        if line is not None:
            assert isinstance(info.value, ChadError)
            assert_located(str(info.value), f, line)


def test_central_differences_see_the_same_functions():
    """A sanity check of the helpers above: the plain functions are smooth where they are tested."""
    assert np.all(np.isfinite(central_diff(with_tolist, (X,), 0)))


# ====================================================================== calls run on data as Python runs them


def packs_everything(*args, **kwargs):
    return args[0] * args[1] + kwargs["a"]


def calls_a_star_function_on_data(x):
    return x * packs_everything(1.0, 2.0, a=3.0)


def test_a_function_with_star_parameters_called_on_data_gets_its_arguments_as_python_binds_them():
    # regression: the packed tuple and dict were passed by position (`g((1.0, 2.0), {"a": 3.0})`): 2.0, not 5.0
    assert chad.grad(calls_a_star_function_on_data)(1.0) == 5.0


class Squarer:
    def __call__(self, z):
        return z * z


class HoldsACallable:
    def __init__(self):
        self.f = Squarer()

    def loss(self, x):
        return x * self.f(3.0) + self.f(x)  # the first call carries no derivative


def test_an_object_held_in_an_attribute_called_on_data():
    # regression: the call chadpy writes for `self.f(...)` has no original to run (a TypeError)
    assert chad.grad(HoldsACallable().loss)(2.0) == 9.0 + 4.0


def _det_of_minor(A, n, m, r, c):
    """The determinant of the m x m minor of the n x n matrix A (flat) whose rows and columns are the linked lists
    r and c of positions, which it updates in place down the recursion and restores (the minors' algorithm)."""
    R0, Cj = r[n], c[n]
    if m == 1:
        return A[R0 * n + Cj]
    det, sign, Cj1 = 0.0, 1.0, n
    r[n] = r[R0]  # row R0 out
    for _ in range(m):
        c[Cj1] = c[Cj]  # column Cj out
        minor = _det_of_minor(A, n, m - 1, r, c)
        c[Cj1] = Cj  # column Cj back
        det = det + sign * A[R0 * n + Cj] * minor
        sign, Cj1, Cj = -sign, Cj, c[Cj]
    r[n] = R0  # row R0 back
    return det


def det_by_minor(A, n):
    r = [*range(1, n), n, 0]
    c = [*range(1, n), n, 0]
    return _det_of_minor(A, n, n, r, c)


def _shift(positions):
    positions[0] = 2


def positions_changed_by_a_helper_after_a_rule_read_them(a):
    idx = [0, 1]
    s = np.sum(a[idx] ** 2)
    _shift(idx)  # the rule of a[idx] reads idx when the backward pass runs: it would see the change
    return s + a[idx[0]]


@pytest.mark.parametrize("n", [2, 3, 4])
def test_index_lists_updated_in_place_down_a_recursion(n):
    """GradBench's determinant by minors: lists of positions (data) updated in place by a recursive helper, as
    Python does; the gradient of a determinant is det(M) inv(M)^T."""
    M = np.random.default_rng(n).normal(size=(n, n))
    assert det_by_minor(list(M.ravel()), n) == pytest.approx(np.linalg.det(M))
    g = chad.grad(det_by_minor)(M.ravel(), n)
    assert_close(g.reshape(n, n), np.linalg.det(M) * np.linalg.inv(M).T)


def positions_changed_by_a_helper_in_a_try(a):
    idx = [0, 1]
    s = np.sum(a[idx] ** 2)
    try:
        _shift(idx)  # in an attempted statement's function, whose first parameter is its environment
    except ValueError:
        pass
    return s + a[idx[0]]


@pytest.mark.parametrize(
    "fn", [positions_changed_by_a_helper_after_a_rule_read_them, positions_changed_by_a_helper_in_a_try]
)
def test_data_a_helper_updates_after_a_rule_read_it_is_refused(fn):
    """Inside a `try` the update was matched to the wrong argument (the attempt's environment not skipped):
    a silent wrong gradient."""
    with pytest.raises(chad.ChadError, match="this call updates `idx` in place"):
        chad.grad(fn)(np.array([1.0, 2.0, 3.0]))
