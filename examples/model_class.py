"""chadpy on a model class: weights are attributes, the forward pass and the loss are methods,
a layer is an object called like a function, and the parameters are a dataclass whose gradient
is a dataclass too. Trained with plain gradient descent."""

from dataclasses import dataclass

import numpy as np

import chadpy as chad

rng = np.random.default_rng(0)
X = rng.normal(size=(64, 2))
y = np.sin(X[:, 0]) + 0.5 * X[:, 1]


@dataclass
class Params:
    W1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray


class Dense:
    """A layer: an object with `__call__`."""

    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x):
        return np.tanh(x @ self.W + self.b)


class Model:
    def __init__(self, params, decay):
        self.hidden = Dense(params.W1, params.b1)
        self.w2 = params.w2
        self.decay = decay

    def predict(self, x):
        return self.hidden(x) @ self.w2

    @property
    def penalty(self):
        return self.decay * np.sum(self.w2 * self.w2)

    def loss(self, x, target):
        return np.mean((self.predict(x) - target) ** 2) + self.penalty


def loss(params):
    """The model is built inside the differentiated function: a record of its attributes."""
    return Model(params, 1e-3).loss(X, y)


params = Params(0.5 * rng.normal(size=(2, 8)), np.zeros(8), 0.5 * rng.normal(size=8))
grad = chad.grad(loss)
first = loss(params)
for _ in range(200):
    g = grad(params)  # a Params, like its argument
    params = Params(params.W1 - 0.1 * g.W1, params.b1 - 0.1 * g.b1, params.w2 - 0.1 * g.w2)
print(f"loss {first:.4f} -> {loss(params):.4f} after 200 steps; the gradient is a {type(g).__name__}")
assert loss(params) < 0.5 * first

# the derivative is Python: the constructor, the method calls and the layer's call are in it
print(chad.source(loss, params).split("\n\n")[0])
