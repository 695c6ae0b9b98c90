"""State kept on the instance of a bound method, written and read again in the call (`self.states[:, t] = h` then
`self.states[:, t - 1]`, `self.h = ...` then `self.h`, `self.cache[k] = ...`): derivatives flow through what the
call reads back (`rewrite/local_state.py`), and the object is left as the plain call leaves it (an array updated in
place stays the same object). Gradients against central differences."""

from __future__ import annotations

import numpy as np
import pytest

import chadpy as chad
from tests.support.fd import assert_close, central_diff


class Recurrent:
    def __init__(self):
        self.W = np.array([[0.5, -0.2], [0.3, 0.4]])
        self.states = np.zeros((2, 3))
        self.h = np.zeros(2)
        self.calls = 0

    def forward(self, xs):
        for t in range(xs.shape[1]):
            prev = self.states[:, t - 1] if t > 0 else np.zeros(2)
            self.states[:, t] = np.tanh(self.W @ prev + xs[:, t])
        return np.sum(self.states**2)

    def step(self, x):
        self.calls += 1
        self.h = np.tanh(self.W @ self.h + x)
        out = np.sum(self.h * x)
        self.h = self.h * 0.5
        return out + np.sum(self.h) * self.calls

    def cached(self, x):
        self.cache = {}
        self.cache["a"] = x * 2
        return np.sum(self.cache["a"] * x)

    def leaves_early(self, x):
        for _ in range(3):
            self.h = np.tanh(self.h + x)
            if np.sum(self.h) > 100.0:
                return 0.0
        return np.sum(self.h * self.h)

    def read_by_a_method(self, x):
        self.h = x * 2
        return self._total()

    def _total(self):
        return np.sum(self.h)


class Outer:
    def __init__(self):
        self.inner = Recurrent()

    def loss(self, x):
        return self.inner.step(x) * 2


XS = np.array([[0.5, -0.3, 0.8], [0.1, 0.2, -0.4]])
X = np.array([0.3, -0.7])


@pytest.mark.parametrize(("method", "arg"), [("forward", XS), ("step", X), ("cached", X), ("leaves_early", X)])
def test_state_written_and_read_again_on_the_instance(method, arg):
    ours, plain = Recurrent(), Recurrent()
    states = ours.states
    value, grad = chad.value_and_grad(getattr(ours, method))(arg.copy())
    assert value == pytest.approx(getattr(plain, method)(arg.copy()))
    assert_close(grad, central_diff(lambda a: getattr(Recurrent(), method)(a), (arg,), 0))
    assert_close(ours.states, plain.states)  # the plain call's state, in the array it had
    assert ours.states is states
    assert_close(ours.h, plain.h)
    assert ours.calls == plain.calls
    assert_close(ours.__dict__.get("cache", {}).get("a", 0.0), plain.__dict__.get("cache", {}).get("a", 0.0))


def test_state_read_by_a_method_or_given_back_by_a_helper_is_refused():
    """A method of the object may read the state (not followed), and a helper's caller may read what it gave back
    (it would carry no derivative)."""
    with pytest.raises(chad.ChadError, match="read again later"):
        chad.grad(Recurrent().read_by_a_method)(X)
    with pytest.raises(chad.ChadError, match="which the caller gave"):
        chad.grad(Outer().loss)(X)
