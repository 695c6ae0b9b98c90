"""A function whose result holds values of different kinds on different paths, the path chosen by whether an
argument is None (issue 37: CS231n's `loss(X, y=None)` returns the scores without labels, the loss and its
gradients with them). Each specialisation takes the branch the kinds of its arguments decide; the generated
code checks it (a value that joined an optional one can still be None). Gradients against central
differences."""

from __future__ import annotations

import numpy as np
import pytest

import chadpy as chad
from tests.support.fd import assert_grad_matches_fd


def scores_or_loss(X, W, y=None):
    scores = X @ W
    if y is None:
        return scores
    loss = np.sum((scores - y) ** 2)
    return loss, scores


def both_ways(W, X, y):
    loss, _ = scores_or_loss(X, W, y)
    return loss + np.sum(scores_or_loss(X, W) ** 2)


def test_a_none_default_selects_the_branch_and_the_kind_of_the_result():
    rng = np.random.default_rng(0)
    W, X, y = rng.normal(size=(2, 2)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    assert_grad_matches_fd(both_ways, (W, X, y))


def labels_later(W, X, y):
    labels = None
    if y.sum() > 0.0:
        labels = y
    return scores_or_loss(X, W, labels)


def test_a_value_that_may_be_none_where_the_branches_join_is_not_specialised():
    # `labels` may be None (a join with an optional value): the spec for an array must not assume it is one
    W, X = np.ones((2, 2)), np.ones((3, 2))
    with pytest.raises(chad.ChadError, match="specialised this `if`"):
        chad.grad(lambda w: labels_later(w, X, -np.ones((3, 2)))[0])(W)
    assert_grad_matches_fd(lambda w: labels_later(w, X, np.ones((3, 2)))[0], (W,))


def optional_shift(x, shift=None):
    if shift is not None:
        x = x + shift
    return np.sum(x**2)


def test_branches_that_join_are_typed_as_before():
    assert_grad_matches_fd(optional_shift, (np.array([1.0, 2.0]),))
    assert_grad_matches_fd(optional_shift, (np.array([1.0, 2.0]), np.array([0.5, 0.5])))


def terms_or_total(x, as_list=False):
    if as_list:
        out = [x[0] * 2, x[1] ** 2]
    else:
        out = np.sum(x**2)
    return out


def total_unless(x, itemised):
    if not itemised:
        return np.sum(x * x[0])
    return [x[0], x[1] * x[0]]


def test_a_bool_argument_selects_the_branch_and_the_kind_of_the_result():
    """A list on one path, a float on the other, decided by a bool argument of the function being
    differentiated: its value is part of the specialisation (`Flag`), so each value takes its branch."""
    x = np.array([1.5, -2.0])
    np.testing.assert_allclose(chad.grad(terms_or_total)(x), 2 * x)
    np.testing.assert_allclose(chad.grad(terms_or_total)(x, False), 2 * x)
    value, pullback = chad.vjp(terms_or_total, x, True)
    assert value == [3.0, 4.0]
    np.testing.assert_allclose(pullback([1.0, 0.5])[0], [2.0, 0.5 * 2 * x[1]])
    np.testing.assert_allclose(chad.grad(total_unless)(x, False), [np.sum(x) + x[0], x[0]])
    value, pullback = chad.vjp(total_unless, x, True)
    np.testing.assert_allclose(pullback([0.0, 1.0])[0], [x[1], x[0]])
    assert_grad_matches_fd(lambda x: total_unless(x, False), (x,))
