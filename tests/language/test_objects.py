"""Objects as records (issue 14): attribute reads, methods, properties, `__call__`, classes
instantiated inside a differentiated function, and namedtuple/dataclass parameters whose
gradient has their own type. Every gradient is checked against central differences."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections import namedtuple

import numpy as np
import pytest

import chadpy as chad
from chadpy.errors import ChadError
from tests.support.fd import assert_close, assert_grad_matches_fd, central_diff
from tests.support.paths import ROOT

RNG = np.random.default_rng(11)
X = RNG.normal(size=(12, 3))
Y = X @ np.array([0.5, -1.0, 2.0]) + 0.1 * RNG.normal(size=12)


class Linear:
    """A model whose weights are attributes, with a `loss` method (the bound-method style)."""

    def __init__(self, W, b):
        self.W = W
        self.b = b

    def predict(self, x):
        return x @ self.W + self.b

    def loss(self, W):
        return np.mean((X @ W + self.b - Y) ** 2)

    def objective(self):
        return np.mean((self.predict(X) - Y) ** 2)


def test_grad_of_a_bound_method_differentiates_its_parameters():
    model = Linear(np.zeros(3), 0.3)
    W = np.array([0.1, 0.2, -0.3])
    assert_grad_matches_fd(model.loss, (W,))


def test_a_model_class_trained_for_a_few_steps():
    """The weights are attributes; the gradient with respect to the model is a model."""
    model = Linear(np.zeros(3), 0.0)

    def loss(m):
        return m.objective()

    g = assert_grad_matches_fd(loss, (model,))
    assert isinstance(g, Linear)
    grad = chad.grad(loss)
    losses = [loss(model)]
    for _ in range(5):
        g = grad(model)
        model = Linear(model.W - 0.1 * g.W, model.b - 0.1 * g.b)
        losses.append(loss(model))
    assert all(b < a for a, b in zip(losses, losses[1:])), losses


Params = namedtuple("Params", "W b")


@dataclasses.dataclass
class DParams:
    W: np.ndarray
    b: float
    name: str = "linear"


@dataclasses.dataclass(frozen=True)
class Frozen:
    W: np.ndarray
    b: float


def params_loss(p):
    return np.mean((X @ p.W + p.b - Y) ** 2) + 0.1 * p.b**2


@pytest.mark.parametrize(
    "params",
    [Params(np.array([0.1, 0.2, 0.3]), 0.4), DParams(np.array([0.1, 0.2, 0.3]), 0.4), Frozen(np.ones(3), -0.2)],
    ids=["namedtuple", "dataclass", "frozen-dataclass"],
)
def test_parameters_as_a_namedtuple_or_dataclass_get_a_gradient_of_their_type(params):
    g = assert_grad_matches_fd(params_loss, (params,))
    assert type(g) is type(params)
    if isinstance(params, DParams):
        assert g.name == "linear"  # a discrete attribute keeps its value


def test_nested_records_and_containers_of_them():
    @dataclasses.dataclass
    class Layer:
        W: np.ndarray
        b: np.ndarray

    @dataclasses.dataclass
    class Net:
        layers: list
        scale: float

    def net_loss(net):
        h = X
        for layer in net.layers:
            h = np.tanh(h @ layer.W + layer.b)
        return net.scale * np.sum(h**2)

    net = Net([Layer(RNG.normal(size=(3, 4)), RNG.normal(size=4)), Layer(RNG.normal(size=(4, 2)), np.zeros(2))], 0.5)
    g = assert_grad_matches_fd(net_loss, (net,))
    assert isinstance(g, Net) and all(isinstance(layer, Layer) for layer in g.layers)


class Base:
    scale = 2.0  # a class attribute

    def __init__(self, w):
        self.w = w

    def inner(self, x):
        return self.w * x

    @staticmethod
    def square(v):
        return v * v

    @classmethod
    def factor(cls, v):
        return cls.scale * v

    @property
    def w2(self):
        return self.w * self.w


class Derived(Base):
    def __call__(self, x):
        return self.inner(x) + self.square(x) + self.factor(self.w) + self.w2


def test_inherited_static_class_methods_properties_and_call():
    def f(w, x):
        obj = Derived(w)
        return obj(x) * x

    assert_grad_matches_fd(f, (0.7, 1.3), argnums=(0, 1))


def test_methods_calling_methods_and_a_function_held_in_an_attribute():
    class Activation:
        def __init__(self, fn, gain):
            self.fn = fn
            self.gain = gain

        def __call__(self, v):
            return self.gain * self.fn(v)

    class Net:
        def __init__(self, W):
            self.W = W
            self.act = Activation(np.tanh, 1.5)

        def forward(self, x):
            return self.act(x @ self.W)

        def loss(self, x):
            return np.sum(self.forward(x) ** 2)

    def f(W):
        return Net(W).loss(X)

    assert_grad_matches_fd(f, (RNG.normal(size=(3, 2)),))


def test_an_init_with_branches_and_augmented_attributes():
    class Acc:
        def __init__(self, x, double):
            self.total = 0.0
            if double:
                self.total += 2.0 * x
            else:
                self.total += x
            self.count = 1

        def add(self, v):
            return self.total + v * self.count

    def f(x, y):
        return Acc(x, True).add(y) * Acc(y, False).add(x)

    assert_grad_matches_fd(f, (0.4, -1.2), argnums=(0, 1))


def test_dataclass_and_namedtuple_built_inside():
    def f(w, b):
        p = Params(w, b)
        q = DParams(w * 2.0, b)
        return params_loss(p) + params_loss(q)

    assert_grad_matches_fd(f, (np.array([0.3, -0.1, 0.2]), 0.5), argnums=(0, 1))


def test_a_record_returned_by_a_helper_and_read_later():
    def make(w):
        return DParams(w, float(np.sum(w)))

    def f(w):
        p = make(w)
        return np.sum(p.W**2) * p.b

    assert_grad_matches_fd(f, (np.array([0.3, -0.1, 0.2]),))


MODEL = Linear(np.array([1.0, -1.0, 0.5]), 0.2)


def uses_outside_object(x):
    return np.sum(MODEL.predict(X) * x) + MODEL.b * np.sum(x)


def test_an_outside_object_is_data_read_when_the_derivative_runs():
    x = np.linspace(-1.0, 1.0, 12)
    assert_grad_matches_fd(uses_outside_object, (x,))
    first = chad.grad(uses_outside_object)(x)
    MODEL.W = np.array([2.0, 0.0, 0.0])  # changed between two gradient calls
    try:
        second = chad.grad(uses_outside_object)(x)
        assert_close(second, central_diff(uses_outside_object, (x,), 0))
        assert not np.allclose(first, second)
    finally:
        MODEL.W = np.array([1.0, -1.0, 0.5])


def test_assigning_an_attribute_of_an_argument_is_an_error():
    def f(p):
        p.b = 2.0 * p.b
        return p.b

    p = DParams(np.ones(3), 1.0)
    with pytest.raises(ChadError, match="changes an attribute of `p`, an object its caller holds"):
        chad.grad(f)(p)
    assert p.b == 1.0


def test_a_method_assigning_an_attribute_of_its_object_is_an_error():
    class Counter:
        def __init__(self, x):
            self.x = x

        def scaled(self):
            self.x = 2.0 * self.x  # updates the caller's object
            return self.x

    def f(x):
        c = Counter(x)
        return c.scaled() + c.x

    with pytest.raises(ChadError, match="changes an attribute of `self`, an object its caller holds") as e:
        chad.grad(f)(1.0)
    assert "self.x = 2.0 * self.x" in str(e.value)


def test_an_unknown_attribute_raises_pythons_error_when_it_is_read():
    # it may be set by a statement run as written (a helper that initialises the object on the first call)
    def f(p):
        return p.c * 2.0

    with pytest.raises(AttributeError, match="'c'"):
        f(DParams(np.ones(3), 1.0))
    with pytest.raises(AttributeError, match="'c'"):
        chad.grad(f)(DParams(np.ones(3), 1.0))


def test_nested_attribute_assignment_is_an_error():
    def f(x):
        obj = Base(x)
        obj.inner.z = 1.0
        return x

    with pytest.raises(ChadError, match="reads `obj`, which carries a derivative here, and stores into an object"):
        chad.grad(f)(1.0)


class Holder:
    def __init__(self):
        self.W = np.array([1.0, 2.0])
        self.act = np.tanh


HOLDER = Holder()


def reads_holder(x):
    return np.sum(HOLDER.act(HOLDER.W * x))


def test_an_outside_objects_attribute_changing_kind_or_function_rebuilds_the_derivative():
    x = 0.3
    assert_close(chad.grad(reads_holder)(x), central_diff(reads_holder, (x,), 0))
    try:
        HOLDER.W = np.array([[1.0, 2.0], [3.0, -1.0]])  # another rank
        assert_close(chad.grad(reads_holder)(x), central_diff(reads_holder, (x,), 0))
        HOLDER.act = np.sin  # another function held
        assert_close(chad.grad(reads_holder)(x), central_diff(reads_holder, (x,), 0))
    finally:
        HOLDER.W, HOLDER.act = np.array([1.0, 2.0]), np.tanh


class Gaussian:
    """Not a dataclass: its registered children are `mean` and `log_sd`; `cache` is derived data."""

    def __init__(self, mean, log_sd):
        self.mean = mean
        self.log_sd = log_sd
        self.cache = {"note": "not differentiated"}

    def logpdf(self, x):
        z = (x - self.mean) / np.exp(self.log_sd)
        return -0.5 * np.sum(z * z) - np.sum(self.log_sd)


chad.register_pytree(Gaussian, lambda g: ((g.mean, g.log_sd), None), lambda aux, children: Gaussian(*children))


def test_register_pytree_gives_the_gradient_by_unflatten():
    def nll(g):
        return -g.logpdf(X[:, 0])

    g0 = Gaussian(0.3, -0.2)
    grad = chad.grad(nll)(g0)
    assert isinstance(grad, Gaussian)
    assert_close(grad.mean, central_diff(lambda m: nll(Gaussian(m, -0.2)), (0.3,), 0))
    assert_close(grad.log_sd, central_diff(lambda s: nll(Gaussian(0.3, s)), (-0.2,), 0))


@pytest.mark.slow  # 1.5 s (an example script in a subprocess): the whole suite runs it, the subset leaves it
def test_the_model_class_example_runs():
    root = str(ROOT)
    path = os.path.join(root, "examples", "model_class.py")
    subprocess.run([sys.executable, path], check=True, capture_output=True, cwd=root)


class Scaled(Base):
    def inner(self, x):
        return 3.0 * super().inner(x) + self.w


class InitsBase(Base):
    def __init__(self, w):
        super().__init__(w)


def test_super_method_call():
    def f(w, x):
        return Scaled(w).inner(x) * w

    assert_grad_matches_fd(f, (0.7, -1.3), argnums=(0, 1))


def test_super_init_runs_the_parent_constructor():
    """`super().__init__(w)` was a refusal; the parent's `__init__` fills the object (more in
    tests/language/test_real_code_forms.py)."""

    def f(w):
        return InitsBase(w).inner(2.0)

    assert_grad_matches_fd(f, (1.0,))


@dataclasses.dataclass
class WithPostInit:
    w: float

    def __post_init__(self):
        self.w2 = self.w * self.w


def test_a_dataclass_with_post_init_built_inside_is_a_clear_error():
    def f(w):
        return WithPostInit(w).w2

    with pytest.raises(ChadError, match="__post_init__"):
        chad.grad(f)(1.0)


class Node:
    def __init__(self, w, parent=None):
        self.w = w
        self.parent = parent
        self.me = self  # a cycle


def test_an_object_referring_to_itself_is_typed_and_differentiated():
    def f(node):
        return node.w * node.w

    g = chad.grad(f)(Node(1.5))
    assert isinstance(g, Node) and g.w == 3.0


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


class Schedule:
    """An object whose attributes are named like an array's (`T`, `shape`): they are its attributes."""

    def __init__(self, rate, T, shape):
        self.rate = rate
        self.T = T
        self.shape = shape


def discounted(x, s):
    return x * s.rate * s.T + s.shape * x * x


def transposed_inside(A, s):
    return np.sum(A.T * s.T)


def test_attributes_named_like_an_arrays_are_the_objects_own():
    """`s.T` of an object is its attribute `T`, not a transpose (it was `np.transpose(s)`, a TypeError
    leaving chadpy); an array's `.T` in the same function is still its transpose."""
    s = Schedule(3.0, 5.0, 0.5)
    assert chad.grad(discounted)(2.0, s) == 3.0 * 5.0 + 2 * 0.5 * 2.0
    g = chad.grad(discounted, argnums=1)(2.0, s)
    assert (g.rate, g.T, g.shape) == (2.0 * 5.0, 2.0 * 3.0, 2.0 * 2.0)
    A = np.arange(6.0).reshape(2, 3)
    assert_grad_matches_fd(transposed_inside, (A, s), argnums=0)
    gs = chad.grad(transposed_inside, argnums=1)(A, s)
    assert gs.T == np.sum(A) and gs.rate == 0.0


class Spring:
    """Private names: Python compiles `self.__k` in a class's code as `self._Spring__k`."""

    def __init__(self, k):
        self.__k = k

    def __energy(self, x):
        return 0.5 * self.__k * x * x

    def total(self, x):
        return self.__energy(x) + self.__k * x

    @property
    def stiffness(self):
        return self.__k


def spring_use(x, s):
    return s.total(x) * s.stiffness


def spring_made(k):
    return Spring(k).total(2.0)


def test_private_names_are_mangled_as_python_does():
    """`self.__energy(x)`, `self.__k` in Spring's methods are `_Spring__energy`, `_Spring__k` (they were
    not found). With t = k x^2 / 2 + k x: d/dx t = k x + k; d/dx (t k) = (k x + k) k; d/dk (t k) =
    (x^2 / 2 + x) k + t; and d/dk of Spring(k).total(2) = 2 + 2."""
    s = Spring(3.0)
    assert chad.grad(s.total)(2.0) == 9.0
    gx, gs = chad.grad(spring_use, argnums=(0, 1))(2.0, s)
    assert gx == 27.0 and gs._Spring__k == 4.0 * 3.0 + 12.0
    assert chad.grad(spring_made)(3.0) == 4.0
