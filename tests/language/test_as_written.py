"""Code through which no derivative flows runs as Python runs it (issue 37): `raise`, `try`, `global` and
`nonlocal` state, `import`, `del`, a `class` statement, writes into objects the function was given, data
that library calls return. The derivative's forward pass has the plain call's side effects, in the same
order; gradients are checked against central differences or closed forms; a statement a derivative would
have to flow through is a located `ChadTypeError` naming the variable."""

from __future__ import annotations

import math
import traceback

import numpy as np
import pytest

import chadpy as chad
from tests.support.fd import assert_close, assert_grad_matches_fd, central_diff
from tests.support.located import assert_located

# ---------------------------------------------------------------- raise, assert, messages


def checked_square(x):
    if x < -100.0:
        raise ValueError(f"x = {x} is too small")
    return x * x


def test_a_raise_in_a_branch_not_taken_runs_as_python():
    assert chad.grad(checked_square)(3.0) == 6.0


def test_a_raise_on_the_path_taken_raises_the_users_exception_at_the_users_line():
    with pytest.raises(ValueError, match="x = -200.0 is too small") as info:
        chad.grad(checked_square)(-200.0)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].filename == __file__ and frames[-1].line.startswith("raise ValueError")


def raise_in_a_loop(xs):
    total = 0.0
    for x in xs:
        if x != x:
            raise ValueError("nan")
        total = total + x * x
    return total


def test_a_raise_inside_a_loop():
    assert chad.grad(raise_in_a_loop)([1.0, 2.0]) == [2.0, 4.0]
    with pytest.raises(ValueError, match="nan"):
        chad.grad(raise_in_a_loop)([1.0, math.nan])


def formatted_assert(x):
    eps = np.finfo(float).eps
    assert np.all(x > 0), f"expected positive values, got {x}"
    return np.sum(np.log(x + eps))


def test_library_data_and_str_methods_run_as_they_are():
    x = np.array([0.5, 2.0])
    assert_close(chad.grad(formatted_assert)(x), 1.0 / (x + np.finfo(float).eps), where="gradient")
    with pytest.raises(AssertionError, match=r"expected positive values, got \[-1.  2.\]"):
        chad.grad(formatted_assert)(np.array([-1.0, 2.0]))


def noisy(x):
    rng = np.random.default_rng(0)
    np.random.seed(1)
    noise = rng.normal(size=x.shape) + np.random.rand(*x.shape)
    return np.sum(x * noise)


def test_random_generators_made_inside_run_as_they_are():
    x = np.ones(3)
    expected = np.random.default_rng(0).normal(size=3) + np.random.RandomState(1).rand(3)  # seed 1's stream
    assert_close(chad.grad(noisy)(x), expected, where="gradient")


# ---------------------------------------------------------------- state: global, nonlocal, objects

CALLS = 0


def counted(x):
    global CALLS
    CALLS += 1
    return math.sin(x) * CALLS


def test_a_global_counter_counts_the_derivatives_calls_as_the_plain_calls():
    global CALLS
    CALLS = 0
    g = chad.grad(counted)(0.3)
    assert CALLS == 1 and g == pytest.approx(math.cos(0.3))  # CALLS read after the increment: 1
    chad.grad(counted)(0.3)
    assert CALLS == 2


def make_objective():
    evaluations = 0

    def objective(x):
        nonlocal evaluations
        evaluations += 1
        return np.sum(x**2)

    return objective, lambda: evaluations


def test_a_nonlocal_counter_in_an_objective():
    objective, count = make_objective()
    assert_close(chad.grad(objective)(np.array([1.0, 2.0])), np.array([2.0, 4.0]), where="gradient")
    assert count() == 1
    assert_grad_matches_fd(objective, (np.array([0.3, -0.7]),))


class Dense:
    """A layer that initialises itself on its first call and counts its calls (numpy-ml's style)."""

    def __init__(self, n_out):
        self.n_out = n_out
        self.is_initialized = False
        self.calls = 0
        self.cache = {}

    def forward(self, X):
        if not self.is_initialized:
            self.n_in = X.shape[1]
            self.W = np.linspace(-1.0, 1.0, self.n_in * self.n_out).reshape(self.n_in, self.n_out)
            self.is_initialized = True
        self.calls += 1
        self.cache["shape"] = X.shape
        return np.sum(np.tanh(X @ self.W))


def test_a_layer_initialised_on_its_first_call_and_its_bookkeeping():
    layer = Dense(2)
    X = np.array([[0.1, 0.2, 0.3], [0.4, -0.5, 0.6]])
    before = X.copy()
    g = chad.grad(layer.forward)(X)
    assert layer.is_initialized and layer.n_in == 3 and layer.calls == 1 and layer.cache == {"shape": (2, 3)}
    np.testing.assert_array_equal(X, before)  # the caller's data unchanged
    assert_close(g, central_diff(Dense(2).forward, (X,), 0), where="gradient")
    chad.grad(layer.forward)(X)
    assert layer.calls == 2


def test_an_import_inside_the_function():
    def f(x):
        import math as m

        from numpy import tanh

        return m.sin(x) + tanh(x)

    assert chad.grad(f)(0.4) == pytest.approx(math.cos(0.4) + 1.0 - math.tanh(0.4) ** 2)


def test_try_del_and_class_statements_no_derivative_flows_through():
    config = {"scale": 3.0}

    def f(x):
        class Box:
            pass

        box = Box()
        try:
            scale = config["scale"]
        except KeyError:
            scale = 1.0
        try:
            offset = config["offset"]
        except KeyError:
            offset = 0.5
        tmp = [box]
        del tmp
        return x * scale + offset * x * x

    assert chad.grad(f)(2.0) == pytest.approx(3.0 + 2.0 * 0.5 * 2.0)


# ---------------------------------------------------------------- data of a kind seen only when the code runs


def class_attribute_accumulated(x):
    class Cfg:
        scale = 2.0
        order = 2

    s = Cfg.scale  # data of unknown kind: a class the function makes as it runs
    for _ in range(2):
        s += x[0] ** Cfg.order
    return s * x[1]


def _shifted(s):
    s += 0.5  # a number: a new value, nothing updated in place
    return s * s


def helper_augments_its_argument(x):
    class Cfg:
        order = 3

    return _shifted(x[0] ** Cfg.order) + x[1]


def machine_epsilon_of_a_run_time_dtype(x):
    eps = np.finfo(x.dtype).eps
    s = 1.0
    for _ in range(2):
        s -= np.var(x) / eps * 1e-17
    return s


@pytest.mark.parametrize(
    "f", [class_attribute_accumulated, helper_augments_its_argument, machine_epsilon_of_a_run_time_dtype]
)
def test_a_value_of_unknown_kind_augmented(f):
    """`s += t` where s is data whose kind chadpy sees only when the code runs (typed as an array of any shape):
    a number there, so nothing is updated in place, checked when the code runs."""
    x = np.array([0.7, -1.3])
    assert_close(chad.value_and_grad(f)(x.copy())[0], f(x.copy()))
    assert_grad_matches_fd(f, (x,))


def class_array_augmented(x):
    class Cfg:
        w = np.zeros(2)

    s = Cfg.w  # an array: `s += x` updates it in place, the class's too
    s += x
    return np.sum(s * Cfg.w)


def class_array_augmented_by_data(x):
    class Cfg:
        w = np.zeros(2)

    s = Cfg.w
    s += 1.0  # no derivative flows: as Python does it, in place (the class's array too)
    return np.sum(x * Cfg.w)


def test_data_of_unknown_kind_augmented_as_python_does():
    """`s += 1.0` on data whose kind chadpy sees only when the code runs, no derivative flowing: in place, as in
    Python (it was a new array: the class's array read after missed the update, a silent wrong value)."""
    x = np.array([0.7, -1.3])
    value, grad = chad.value_and_grad(class_array_augmented_by_data)(x)
    assert_close(value, np.sum(x))
    assert_close(grad, np.ones(2))


def test_an_array_of_unknown_kind_augmented_in_place_is_refused_when_it_runs():
    with pytest.raises(chad.ChadError, match="updates an array in place") as info:
        chad.grad(class_array_augmented)(np.array([0.7, -1.3]))
    assert_located(str(info.value), class_array_augmented, "s += x")


# ---------------------------------------------------------------- arrays unpacked into names


def line_model(theta):
    m, b, log_f = theta
    return m * b * np.exp(log_f) + m * m


def rows(M):
    first, second = M
    return np.sum(first * second) + first[0]


@pytest.mark.parametrize(("f", "arg"), [(line_model, np.array([0.7, -1.2, 0.3])), (rows, np.arange(6.0).reshape(2, 3))])
def test_an_array_unpacked_into_names(f, arg):
    assert_grad_matches_fd(f, (arg,))


# ---------------------------------------------------------------- strong zero


def potential(x):
    m = np.array([1.0, 2.0, 3.0])
    d2 = (x[:, None] - x[None, :]) ** 2
    inv_r = np.sqrt(d2)
    inv_r[inv_r > 0] = 1.0 / inv_r[inv_r > 0]
    return np.sum(np.triu(-m * m[:, None] * inv_r, 1))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_zero_cotangent_at_a_pole_gives_zero_not_nan():
    x = np.array([0.3, 1.1, 2.5])
    assert_close(chad.grad(potential)(x), central_diff(potential, (x,), 0), where="gradient")
    at_zero = np.array([0.0, 1.0, 4.0])
    pieces = {
        "sqrt": lambda v: np.sum(np.where(v > 0, np.sqrt(v), 0.0)),
        "power": lambda v: np.sum(np.where(v > 0, v**0.5, 0.0)),
        "log": lambda v: np.sum(np.where(v > 0, np.log(v), 0.0)),
        "divide": lambda v: np.sum(np.where(v > 0, 1.0 / v, 0.0)),
    }
    for name, f in pieces.items():
        g = chad.grad(f)(at_zero)
        assert g[0] == 0.0, name
    assert chad.grad(lambda v: 0.0 * math.sqrt(v) + v)(0.0) == 1.0
    # an exponent that is not a whole number has no value below 0: the branch not taken gives 0, not NaN
    g = chad.grad(lambda v: np.sum(np.where(v > 0, v**2.5, 0.0)))(np.array([0.5, -0.5]))
    assert g[1] == 0.0 and g[0] == pytest.approx(2.5 * 0.5**1.5)


# ---------------------------------------------------------------- where a derivative would flow: refused


def class_on_the_path(x):
    class Box:
        scale = x

    return Box.scale


def stores_a_derivative(x):
    global CALLS
    CALLS = x
    return x * CALLS  # read again: it would carry no derivative


@pytest.mark.parametrize(
    ("f", "variable", "line"), [(class_on_the_path, "x", "class Box:"), (stores_a_derivative, "x", "CALLS = x")]
)
def test_a_statement_a_derivative_would_flow_through_is_refused_naming_it(f, variable, line):
    with pytest.raises(chad.ChadTypeError, match=f"reads `{variable}`, which carries a derivative here") as info:
        chad.grad(f)(2.0)
    assert_located(str(info.value), f, line)


# ---------------------------------------------------------------- writes into outside containers


class Attention:
    def __init__(self):
        self.params = {}

    def forward(self, x):
        if not self.params:  # initialised on the first call, into a dict the object holds
            self.params["scale"] = 2.0
        return self.params["scale"] * x * x


def test_a_key_stored_as_written_is_read_when_the_code_runs():
    # regression: the key missing when the function was read made the read a dead path (a zero gradient)
    layer = Attention()
    assert chad.value_and_grad(layer.forward)(3.0) == (18.0, 12.0)
    assert chad.grad(layer.forward)(1.0) == 4.0


LOG: list[str] = []
STATS = {"calls": 0}


def logged(x):
    STATS["calls"] += 1
    LOG.append("x = {:.1f}".format(x))  # noqa: UP032 (str.format: data, run as it is)
    return x**3


def test_outside_lists_and_dicts_are_written_as_in_the_plain_call():
    LOG.clear()
    STATS["calls"] = 0
    assert chad.grad(logged)(2.0) == 12.0
    assert LOG == ["x = 2.0"] and STATS == {"calls": 1}


def rows_then_write(x, m):
    a = m * 1.0
    first, second = a  # views of a's rows
    a[1, 2] = x
    return np.sum(second)


def test_rows_unpacked_from_an_array_written_after_are_refused_not_wrong():
    # regression (random programs, seed 1475): the rows were taken for copies, a write to the array after it
    # did not reach them: a zero gradient. They are views: the write is refused like any write a view may see
    with pytest.raises(chad.ChadError, match="in place"):
        chad.grad(rows_then_write)(0.5, np.ones((2, 3)))


class _Scaled:
    def __init__(self, a):
        self.a = a

    def __call__(self, t):
        class Cfg:  # its method's `self` is its own: the statement reads nothing that carries a derivative
            scale = 2.0

            def __init__(self, k):
                self.k = k

        cfg = Cfg(3)
        return self.a * t * Cfg.scale * cfg.k


def test_a_class_statement_whose_methods_take_self_inside_a_method():
    """The `class` statement read `self` (its methods' own parameter) as the enclosing method's, which carries a
    derivative: refused (seeds 20856, 21598)."""
    assert chad.grad(lambda a: _Scaled(a)(0.5))(1.5) == pytest.approx(3.0)


EXTENDED = []


def logs_data_of_mixed_kinds(x):
    EXTENDED.extend([x.shape, 0.5])  # a tuple and a float: data, passed along as it is
    return np.sum(x * x)


def unknown_kind_held_then_augmented(x):
    eps = np.finfo(x.dtype).eps  # of a run-time dtype: its kind is seen only when the code runs
    s = eps if x[0] > 5.0 else x[1]
    held = [0.5, s]  # a list holds s: a number is not changed by `s += ...`, which is checked when it runs
    s += x[0]
    return s * held[1]


def test_data_of_mixed_kinds_and_a_held_value_of_unknown_kind():
    EXTENDED.clear()
    x = np.array([0.7, -1.3])
    assert_close(chad.grad(logs_data_of_mixed_kinds)(x), 2 * x)
    assert EXTENDED == [(2,), 0.5]
    assert_close(chad.value_and_grad(unknown_kind_held_then_augmented)(x)[0], unknown_kind_held_then_augmented(x))
    assert_grad_matches_fd(unknown_kind_held_then_augmented, (x,))


def elements_unpacked_then_written(x):
    v = x * 2.0
    a, b = v  # numbers: copies of the elements, not views
    v[0] = x[1] ** 2
    return a * b + np.sum(v)


def test_the_elements_of_a_vector_unpacked_then_the_vector_written():
    """A 1-d array unpacked gives numbers (copies): a write to the array after it was refused, as for the rows of
    a matrix, which are views (seeds 30807, 31605)."""
    x = np.array([0.7, -1.3])
    assert_close(chad.value_and_grad(elements_unpacked_then_written)(x)[0], elements_unpacked_then_written(x))
    assert_grad_matches_fd(elements_unpacked_then_written, (x,))
