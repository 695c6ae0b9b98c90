"""Gradients through NumPy code, checked against central differences.

Arrays as arguments (the gradient is an array of the same shape and dtype), as
results (through `vjp`) and as loop state; elementwise arithmetic and functions,
broadcasting, reductions with `axis=`/`keepdims=`, the method forms, matrix
products, reshaping, concatenation, norms, basic and integer-array indexing,
constant arrays; and the usual small models (MLP, logistic regression, RNN,
log-sum-exp, softmax cross-entropy, Rosenbrock).

Every function is defined at module level (chadpy reads source with `inspect`) and
checked by `assert_grad_matches_fd` (or `assert_vjp_matches_fd`): both code
generation modes, the primal value, no mutation of the arguments. Inputs are seeded
and kept away from kinks and ties (abs, maximum, clip, where, max).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import chadpy as chad
from tests.support.fd import (
    assert_close,
    assert_grad_matches_fd,
    assert_vjp_matches_fd,
    rand_array,
    rand_float,
)

# ====================================================================== elementwise


def np_arith(x, y):
    z = x + y * x - y / (x * x + 1.0) + x**2 - y**3
    return np.sum(z * z)


def np_unary(x):
    # x in (0.2, 1.2): log and sqrt defined, tan far from its pole
    return np.sum(np.exp(x) + np.log(x) + np.sqrt(x) + np.sin(x) * np.cos(x) + np.tan(x))


def np_hyperbolic(x):
    return np.sum(np.tanh(x) * np.sinh(x) + np.cosh(x))


def np_abs_power(x, y):
    # x away from 0, y positive
    return np.sum(np.abs(x) * np.power(y, 3) + np.power(np.abs(x), y) + y**2.5)


def np_maximum_minimum(x, y):
    # x away from 0 and from y
    return np.sum(np.maximum(x, y) * 2.0 + np.minimum(x, 0.0) * x + np.minimum(y, x))


def np_clip(x):
    # x away from -0.5 and 0.5
    return np.sum(np.clip(x, -0.5, 0.5) * x + np.clip(x * 2.0, 0.0, 10.0))


def np_where(x, y):
    # x away from 0
    return np.sum(np.where(x > 0.0, x * y, y * y))


def np_math_on_elements(v):
    return math.exp(v[0]) * v[1] + math.sin(v[2]) * v[0]


# ====================================================================== broadcasting


def np_scalar_broadcast(s, x):
    return np.sum(s * x + s - x / s) + np.sum(2.0**x) * s


def np_numpy_scalar(s, x):
    return np.sum(np.exp(s * x)) * s


def np_row_broadcast(M, r):
    # M (3, 4), r (4,)
    return np.sum(np.sin(M + r) * r)


def np_column_broadcast(M, c):
    # M (3, 4), c (3, 1)
    return np.sum((M - c) ** 2 / (c * c + 1.0))


# ====================================================================== reductions


def np_sum_axes(X):
    a = np.sum(X, axis=0)
    b = np.sum(X, axis=1)
    c = np.sum(X, axis=-1)
    return np.sum(a * a) + np.sum(np.sin(b)) + np.sum(c**3) + np.sum(X)


def np_mean_axes(X):
    # X (2, 3, 4)
    return np.sum(np.mean(X, axis=(0, 2)) ** 2) + np.mean(X) + np.sum(np.mean(X, axis=1) * X[:, 0])


def np_prod(X):
    # X in (0.5, 1.5): no zeros
    return np.sum(np.prod(X, axis=0)) + np.prod(X[0]) + np.sum(np.prod(X, axis=-1, keepdims=True) * X)


def np_max_min_axes(X):
    # X (2, 3, 4), no ties
    a = np.max(X, axis=(0, 2))
    b = np.min(X, axis=-1)
    return np.sum(a * a) - np.sum(b**3) + np.max(X) * np.min(X)


def np_keepdims(X):
    centered = X - np.mean(X, axis=1, keepdims=True)
    scaled = centered / np.sum(X * X, axis=0, keepdims=True)
    return np.sum(scaled * np.max(X, axis=1, keepdims=True)) + np.sum(np.min(X, axis=0, keepdims=True))


# ====================================================================== methods, products, shapes


def np_methods(X, v):
    # X (3, 4), v (4,)
    a = X.sum() + X.mean()
    b = X.sum(axis=0) @ v
    c = np.sum(X.T @ X.dot(v))
    d = np.sum(X.reshape(2, 6)[1] ** 2) + np.sum(X.reshape((4, 3))[:, 0])
    return a * b + c + d


def np_matmul_ops(A, B, v):
    # A (3, 4), B (4, 2), v (4,)
    C = A @ B
    D = np.matmul(A, B)
    u = np.dot(A, v)
    w = A @ v
    return np.sum(C * D) + np.dot(u, w) + np.sum(np.tanh(v @ B))


def np_outer(u, v):
    M = np.outer(u, v)
    return np.sum(M * M) + np.sum(np.outer(u, u) @ u)


def np_reshape_transpose(X):
    # X (2, 3)
    Y = np.reshape(X, (3, 2))
    Z = np.transpose(X)
    return np.sum(Y * Z) + np.sum(np.reshape(X, (6,)) * np.arange(6)) + np.sum(X.T @ X)


def np_concatenate_stack(a, b):
    # a, b (3,)
    c = np.concatenate([a, b])
    s = np.stack([a, b], axis=1)
    return np.sum(c * c * np.arange(6)) + np.sum(s @ np.array([1.0, -2.0]) * a)


def np_norm(x):
    return np.linalg.norm(x) * np.sum(x / np.linalg.norm(x - 1.0))


# ====================================================================== indexing, shapes, constants


def np_indexing(X):
    # X (4, 3)
    row = X[1]
    e = X[2, 0]
    block = X[1:3]
    col = X[:, 0]
    return np.sum(row * row) + e * X[-1, -1] + np.sum(block**3) + np.sum(np.sin(col))


def np_index_1d(v):
    return v[0] * v[-1] + np.sum(v[1:3]) * v[2] + np.sum(v[::2] ** 2)


def np_fancy_index(x):
    idx = np.array([0, 2, 2, 1, 0, 2])
    y = x[idx]
    return np.sum(y * y * np.arange(6))


def np_fancy_index_argument(X, idx):
    # rows of X chosen (with repeats) by an integer array argument
    return np.sum(np.tanh(X[idx]) * 1.5)


def np_shape_len(X):
    n, m = X.shape
    s = 0.0
    for i in range(len(X)):
        s = s + np.sum(X[i]) * (i + 1)
    return s / (n * m) + X.shape[1] * np.mean(X)


def np_constants(x):
    z = np.zeros(3)
    o = np.ones(3)
    c = np.array([1.0, -2.0, 0.5])
    r = np.arange(3)
    eye = np.eye(3)
    return np.sum((x + z) * o * c) + np.sum(x * r) + np.sum((eye + np.ones((3, 3))) @ x * x)


# ====================================================================== arrays in loops


def np_cost_sum_index(a):
    s = 0.0
    for i in range(len(a)):
        s = s + a[i]
    return s


def np_accumulate_rows(X):
    acc = np.zeros(X.shape[1])
    for row in X:
        acc = acc + row * row
    return np.sum(np.sqrt(acc))


def np_gradient_descent(x0, A):
    # minimise 0.5 x.A.x - sum(x) from x0, ten steps; the final objective
    x = x0
    for _ in range(10):
        g = A @ x - 1.0
        x = x - 0.1 * g
    return 0.5 * x @ A @ x - np.sum(x)


def np_while_shrink(x):
    # halve until every |x_i| <= 1: the trip count depends on the data
    while np.max(np.abs(x)) > 1.0:
        x = x * 0.5
    return np.sum(x**3)


# ====================================================================== named models


def mlp_loss(W1, b1, W2, b2, X, y):
    h = np.tanh(X @ W1 + b1)
    pred = h @ W2 + b2
    return np.mean((pred - y) ** 2)


def mlp_dict_loss(params, X, y):
    h = np.tanh(X @ params["W1"] + params["b1"])
    pred = h @ params["W2"] + params["b2"]
    return np.mean((pred - y) ** 2)


def logistic_regression(w, b, X, y):
    z = X @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def rnn_loss(W, U, h0, xs):
    h = h0
    for x_t in xs:
        h = np.tanh(W @ h + U @ x_t)
    return np.sum(h * h)


def rnn_state_in_place(W, h0, xs):
    # h is overwritten in place each step: W's gradient terms must use h as it was at that step
    h = h0.copy()
    total = 0.0
    for x_t in xs:
        h[:] = np.tanh(W @ h + x_t)
        total = total + np.sum(h * h)
    return total + 0.1 * np.sum(W * W)  # a dense term added to W's sum of outer products


def layers_in_one_array(Ws, h, steps):
    # W's cotangent, a sum of outer products (folded into a dense base every arrays.Outers.FOLD_AT
    # steps), lands in a slice of Ws' cotangent; so do the single terms of Ws[t % 2] @ h
    W = Ws[0]
    for t in range(steps):
        h = np.sin(0.5 * (W @ h) + Ws[t % 2] @ h)
    return np.sum(h)


def shared_weights(A, B, h):
    # S's cotangent (a sum of outer products, extended in place by +) goes to both A and B: each must
    # get its own value, not one object both extend
    S = sum([A, B])
    for _ in range(3):
        h = np.tanh(S @ h + 0.5 * (A @ h))
    return np.sum(h)


def row_vector_rnn(W, h0):
    # h @ W: W's cotangent is a sum of outer products too, with h on the left; h is overwritten in
    # place after each product read it
    h = h0.copy()
    for _ in range(4):
        h[:] = np.tanh(h @ W)
    return np.sum(h)


def weights_written_in_place(W, h):
    # M's cotangent (a sum of outer products) becomes the owned buffer its element write updates
    M = W * 1.0
    for _ in range(3):
        h = np.tanh(M @ h)
        M[0, 1] = M[0, 1] * 0.5
    return np.sum(h)


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def softmax_cross_entropy(logits, Y):
    # logits (N, K), Y one-hot (N, K)
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(Y * logp) / logits.shape[0]


def rosenbrock_vec(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


# ====================================================================== array results (vjp)


def np_array_result(A, x):
    return np.tanh(A @ x)


def np_matrix_result(x, y):
    return np.outer(np.sin(x), y) * 2.0


def np_tuple_result(x, s):
    return (x * s, np.sum(x * x))


# ====================================================================== cases


def case(fn, *args, argnums=None, rtol=1e-5, atol=1e-6, id=None):
    """One gradient check; argnums defaults to every argument."""
    if argnums is None:
        argnums = tuple(range(len(args)))
    return pytest.param(fn, args, argnums, rtol, atol, id=id or fn.__name__)


X_AWAY = rand_array(10, 6, 0.2, 1.0, signed=True)  # away from 0
Y_AWAY = X_AWAY + rand_array(11, 6, 0.2, 1.0, signed=True)  # away from X_AWAY

# data for the models: 6 examples, 3 features
DATA_X = rand_array(100, (6, 3))
DATA_Y = np.tanh(DATA_X @ np.array([0.5, -1.0, 0.3])) + 0.1 * rand_array(101, 6)
LABELS = (DATA_X @ np.array([1.0, -0.5, 0.2]) + 0.3 * rand_array(102, 6) > 0.0).astype(float)
ONE_HOT = np.eye(3)[[0, 2, 1, 1, 0]]

CASES = [
    # elementwise
    case(np_arith, rand_array(1, (2, 3)), rand_array(2, (2, 3))),
    case(np_unary, rand_array(3, 5, 0.2, 1.2)),
    case(np_hyperbolic, rand_array(4, 5)),
    case(np_abs_power, X_AWAY, rand_array(5, 6, 0.5, 2.0)),
    case(np_maximum_minimum, X_AWAY, Y_AWAY),
    case(np_clip, np.array([-1.2, -0.7, -0.3, 0.1, 0.4, 0.8, 1.5])),
    case(np_where, X_AWAY, rand_array(6, 6)),
    case(np_math_on_elements, rand_array(7, 3)),
    # broadcasting
    case(np_scalar_broadcast, rand_float(8, 0.5, 2.0), rand_array(9, (2, 3))),
    case(np_numpy_scalar, np.float64(0.7), rand_array(12, 4)),
    case(np_row_broadcast, rand_array(13, (3, 4)), rand_array(14, 4)),
    case(np_column_broadcast, rand_array(15, (3, 4)), rand_array(16, (3, 1))),
    # reductions
    case(np_sum_axes, rand_array(17, (3, 4))),
    case(np_mean_axes, rand_array(18, (2, 3, 4))),
    case(np_prod, rand_array(19, (3, 4), 0.5, 1.5)),
    case(np_max_min_axes, rand_array(20, (2, 3, 4))),
    case(np_keepdims, rand_array(21, (3, 4))),
    # methods, products, shapes
    case(np_methods, rand_array(22, (3, 4)), rand_array(23, 4)),
    case(np_matmul_ops, rand_array(24, (3, 4)), rand_array(25, (4, 2)), rand_array(26, 4)),
    case(np_outer, rand_array(27, 3), rand_array(28, 4)),
    case(np_reshape_transpose, rand_array(29, (2, 3))),
    case(np_concatenate_stack, rand_array(30, 3), rand_array(31, 3)),
    case(np_norm, rand_array(32, 4)),
    # indexing, shapes, constants
    case(np_indexing, rand_array(33, (4, 3))),
    case(np_index_1d, rand_array(34, 5)),
    case(np_fancy_index, rand_array(35, 3)),
    case(np_fancy_index_argument, rand_array(36, (4, 2)), np.array([3, 0, 3, 1]), argnums=0),
    case(np_shape_len, rand_array(37, (3, 4))),
    case(np_constants, rand_array(38, 3)),
    # arrays in loops
    case(np_cost_sum_index, rand_array(39, 8)),
    case(np_accumulate_rows, rand_array(40, (4, 3))),
    case(np_gradient_descent, rand_array(41, 3), np.array([[2.0, 0.5, 0.0], [0.5, 1.5, 0.2], [0.0, 0.2, 1.0]])),
    case(np_while_shrink, np.array([3.1, -1.3, 0.4, 2.2])),  # max |x| 3.1: halved twice, to 0.775
    # named models
    case(mlp_loss, rand_array(42, (3, 4)), rand_array(43, 4), rand_array(44, 4), rand_float(45), DATA_X, DATA_Y),
    case(
        mlp_dict_loss,
        {"W1": rand_array(46, (3, 4)), "b1": rand_array(47, 4), "W2": rand_array(48, 4), "b2": rand_float(49)},
        DATA_X,
        DATA_Y,
    ),
    case(logistic_regression, rand_array(50, 3), rand_float(51), DATA_X, LABELS),
    case(
        rnn_loss, rand_array(52, (3, 3), -0.6, 0.6), rand_array(53, (3, 2)), rand_array(54, 3), rand_array(55, (4, 2))
    ),
    case(
        rnn_loss,
        rand_array(56, (3, 3), -0.6, 0.6),
        rand_array(57, (3, 2)),
        rand_array(58, 3),
        [rand_array(59 + t, 2) for t in range(4)],
        id="rnn_loss-list-of-vectors",
    ),
    case(rnn_state_in_place, rand_array(90, (3, 3), -0.6, 0.6), rand_array(91, 3), rand_array(92, (5, 3))),
    case(layers_in_one_array, rand_array(93, (2, 3, 3), -0.6, 0.6), rand_array(94, 3), 300, argnums=(0, 1)),
    case(shared_weights, rand_array(95, (3, 3), -0.6, 0.6), rand_array(96, (3, 3), -0.6, 0.6), rand_array(97, 3)),
    case(row_vector_rnn, rand_array(98, (3, 3), -0.6, 0.6), rand_array(99, 3)),
    case(weights_written_in_place, rand_array(104, (3, 3), -0.6, 0.6), rand_array(105, 3)),
    case(logsumexp, rand_array(63, 6, -3.0, 3.0)),
    case(softmax_cross_entropy, rand_array(64, (5, 3), -2.0, 2.0), ONE_HOT),
    case(rosenbrock_vec, rand_array(65, 5, -1.5, 1.5)),
]


@pytest.mark.parametrize(("fn", "args", "argnums", "rtol", "atol"), CASES)
def test_gradient_matches_finite_differences(fn, args, argnums, rtol, atol):
    assert_grad_matches_fd(fn, args, argnums, rtol, atol)


@pytest.mark.parametrize(
    ("fn", "args", "ct"),
    [
        (np_array_result, (rand_array(70, (3, 4)), rand_array(71, 4)), rand_array(72, 3)),
        (np_matrix_result, (rand_array(73, 3), rand_array(74, 2)), rand_array(75, (3, 2))),
        (np_tuple_result, (rand_array(76, 4), rand_float(77)), (rand_array(78, 4), 0.5)),
    ],
    ids=["vector-result", "matrix-result", "tuple-of-array-and-scalar-result"],
)
def test_vjp_matches_finite_differences(fn, args, ct):
    assert_vjp_matches_fd(fn, args, ct)


# ====================================================================== closed forms and structure


def test_array_gradient_has_the_shape_and_dtype_of_the_argument():
    X = rand_array(80, (3, 4))
    v = rand_array(81, 4)
    for simplify in (True, False):
        gX, gv = chad.grad(np_methods, argnums=(0, 1), simplify=simplify)(X, v)
        assert type(gX) is np.ndarray and gX.shape == (3, 4) and gX.dtype == np.float64
        assert type(gv) is np.ndarray and gv.shape == (4,) and gv.dtype == np.float64
        assert gX is not X and gv is not v


def test_rosenbrock_vectorised_closed_form():
    x = np.array([-1.2, 1.0, 0.5, 2.0, -0.3])
    r = x[1:] - x[:-1] ** 2
    expected = np.zeros(5)
    expected[:-1] += -400.0 * x[:-1] * r - 2.0 * (1.0 - x[:-1])
    expected[1:] += 200.0 * r
    for simplify in (True, False):
        assert_close(chad.grad(rosenbrock_vec, simplify=simplify)(x), expected, rtol=1e-12, atol=1e-12)


def squares(x, s):
    return np.sum(x * x) * (s * s) + s * (x * s)[0]


def test_a_square_takes_one_part_twice_as_large():
    # `x * x`: the rule gives its whole derivative, 2 * d * x, to one operand and nothing to the other
    x = np.array([1.5, -2.0, 0.25], dtype=np.float32)
    s = 0.75
    for simplify in (True, False):
        gx, gs = chad.grad(squares, argnums=(0, 1), simplify=simplify)(x, s)
        want_x = 2.0 * x * s * s
        want_x[0] += s * s
        assert gx.dtype == np.float32
        assert_close(gx, want_x, rtol=1e-6, atol=0.0)
        assert_close(gs, np.sum(x * x) * 2.0 * s + 2.0 * s * x[0], rtol=1e-6, atol=0.0)
    for stage in ("naive", "monadic", "efficient"):
        assert "* 2.0" in chad.source(squares, x, s, stage=stage, simplify=False)


def test_logsumexp_gradient_is_softmax():
    x = np.array([1.0, -2.0, 0.5, 3.0])
    expected = np.exp(x) / np.sum(np.exp(x))
    assert_close(chad.grad(logsumexp)(x), expected, rtol=1e-12, atol=1e-15)


def test_fancy_index_duplicates_accumulate():
    # y = x[[0, 2, 2, 1, 0, 2]], f = sum(y * y * [0, 1, 2, 3, 4, 5])
    x = np.array([1.0, 2.0, 3.0])
    expected = np.array([2.0 * 1.0 * (0 + 4), 2.0 * 2.0 * 3, 2.0 * 3.0 * (1 + 2 + 5)])
    assert_close(chad.grad(np_fancy_index)(x), expected, rtol=1e-12, atol=0.0)


def item_of_parts(x):
    return x[1:2].item() ** 2 + np.sum(x * 2.0).item() * x[0, ...].reshape(1)[0:1].item()


def test_item_is_the_element_and_its_cotangent_goes_back_in_place():
    assert_grad_matches_fd(item_of_parts, (np.array([1.5, -3.0, 4.0]),))


def split_parts(x):
    a, b, c = np.split(x, [1, 3], axis=1)
    halves = np.array_split(x, 2)
    return np.sum(a * c) + np.sum(b**2) + np.sum(halves[-1])


def test_split_into_parts_unpacked_and_indexed():
    assert_grad_matches_fd(split_parts, (rand_array(3, (3, 4)),))


def recurrent_tanh(W, h, xs):
    for t in range(len(xs)):
        h = np.tanh(W @ h * 0.5 + xs[t])
    return np.sum(h * h)


def test_cotangent_shapes_are_known_through_a_tape():
    """`tidy.same_shapes` leaves out `dense`/`unbroadcast` where the shapes are known: a replayed
    tape rebinds the values of the forward pass, and `unbroadcast(e, x)` of an array e is shaped
    like x. Left: the loop's carried one (Zero before the loop); the sum's cotangent meets `h` as the number it
    is (`uniforms`), not as a broadcast array made dense."""
    args = (rand_array(1, (3, 3)), rand_array(2, (3,)), rand_array(3, (4, 3)))
    assert_grad_matches_fd(recurrent_tanh, args, argnums=(0, 1, 2))
    code = chad.source(recurrent_tanh, *args, annotate=False)
    dense_calls = re.findall(r"\bdense\((\w+),", code)
    assert len(dense_calls) == 1 and dense_calls[0].startswith("dh") and "sum_ct" not in code
    assert code.count("unbroadcast(") == 2  # W @ h * 0.5 + xs[t]


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


def std_of_equal_numbers(v):
    b = np.prod(v)
    return np.std(np.array([b, b, b])) + 1.0


def test_std_of_numbers_equal_up_to_rounding_has_the_zero_subgradient():
    """The mean of three equal numbers can be an ulp off them; std's rule divided that rounding by a std of
    order 1e-17 and gave O(1) noise (random programs, seed 675). std is constant along this input: 0."""
    v = np.array([-0.946263411317406, 1.4116901384745093])
    assert np.all(chad.grad(std_of_equal_numbers)(v) == 0.0)
    assert_grad_matches_fd(std_of_equal_numbers, (v,))


def cleaned_sum(x):
    return np.sum(np.nan_to_num(x))


def cleaned_product(x):
    return np.sum(np.nan_to_num(x) * x[0])


def second_differences(x):
    return np.sum(np.diff(x, 2) ** 2) + np.sum(np.diff(np.outer(x, x), axis=0))


def test_nan_to_num_passes_the_cotangent_where_x_is_finite():
    """np.nan_to_num(x): its derivative is 1 where x is finite, 0 where a NaN or an infinity became a
    constant (a constant has no derivative), and the product rule does the rest."""
    x = np.array([2.0, np.nan, np.inf, -3.0, -np.inf])
    np.testing.assert_array_equal(chad.grad(cleaned_sum)(x), [1.0, 0.0, 0.0, 1.0, 0.0])
    assert_grad_matches_fd(cleaned_product, (np.array([2.0, -0.5, 1.5]),))


def test_diff_against_finite_differences():
    assert_grad_matches_fd(second_differences, (np.array([0.3, -1.2, 0.8, 2.0, 0.5]),))


def cube_of_an_element(v):
    a = np.tanh(np.mean([[0.5, v[1]], [2.2e-308, 0.3]], axis=0, keepdims=True) * v[0])
    return a[-1, 1] ** 3


def test_the_value_is_the_plain_calls_to_the_last_bit():
    # regression: `x ** 3` of a NumPy scalar was np.power(x, 3), one ulp from Python's `**` (seed 1523)
    v = np.array([0.13152593242303956 + 0.1384395222020256, 1.1263138946441038])
    assert chad.value_and_grad(cube_of_an_element)(v)[0] == cube_of_an_element(v)


def row_times_a_list(v):
    a = np.outer(v, [0.5, 0.5, 0.5])
    return np.sum(a[1] * [0.3, 0.5, 0.9]) + np.sum([1.0, 2.0] + v)


def row_times_a_list_that_carries_derivatives(v):
    a = np.outer(v, [0.5, 0.5, 0.5])
    return np.sum(a[1] * [0.3, v[0], 0.9])


def test_an_array_and_a_list_are_multiplied_elementwise():
    """`row * [0.3, 0.5, 0.9]` is NumPy's product, not a list's repetition (it was typed as one: a crash in the
    backward pass); a list carrying derivatives there is refused with a ChadError."""
    v = np.array([0.8, 1.3])
    assert_close(chad.grad(row_times_a_list)(v), np.array([1.0, 1.0 + 0.5 * 1.7]))
    with pytest.raises(chad.ChadError, match="list that carries derivatives"):
        chad.grad(row_times_a_list_that_carries_derivatives)(v)
