"""Layers that initialise their weights on the first call, as numpy-ml, Keras-like toy frameworks
and course code write them; the weights are data, the input x is differentiated."""

from __future__ import annotations

import numpy as np

from tests.corpus.registry import Call, corpus


def _layer_state(call):
    """What a first call leaves on the layer: its flags and weights."""
    layer = call.fn.__self__ if hasattr(call.fn, "__self__") else call.fn
    return {k: _snapshot(v) for k, v in vars(layer).items()}


def _snapshot(v):
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, np.random.Generator):
        return v.bit_generator.state  # a draw advances it: the same draws in the plain call and the derivative
    if isinstance(v, dict):
        return {k: _snapshot(x) for k, x in v.items()}
    return v


class Dense:
    """numpy-ml style: `is_initialized` flag, weights drawn from the layer's own generator."""

    def __init__(self, n_out, seed=0):
        self.n_out = n_out
        self.rng = np.random.default_rng(seed)
        self.initialized = False

    def _init_params(self, n_in):
        scale = np.sqrt(2.0 / (n_in + self.n_out))  # glorot
        self.W = self.rng.normal(0.0, scale, (n_in, self.n_out))
        self.b = np.zeros((1, self.n_out))
        self.initialized = True

    @corpus(lambda rng: Call(Dense(3).forward, (rng.standard_normal((4, 5)),)), state=_layer_state)
    def forward(self, X):
        """`if not self.initialized: self._init_params(...)`; then a tanh layer and its squared sum."""
        if not self.initialized:
            self._init_params(X.shape[1])
        Z = X @ self.W + self.b
        return np.sum(np.tanh(Z) ** 2)


class LazyLinear:
    """A Keras-like layer: `build(input_shape)` called from `__call__` when not `self.built`."""

    def __init__(self, units, seed=1):
        self.units = units
        self.seed = seed
        self.built = False

    def build(self, input_shape):
        rng = np.random.default_rng(self.seed)
        self.kernel = rng.uniform(-0.5, 0.5, (input_shape[-1], self.units))
        self.bias = np.full(self.units, 0.1)
        self.built = True

    @corpus(lambda rng: Call(LazyLinear(2), (rng.standard_normal((3, 4)),)), state=_layer_state)
    def __call__(self, inputs):
        """Keras-like: `if not self.built: self.build(inputs.shape)`, then a softplus output summed."""
        if not self.built:
            self.build(inputs.shape)
        out = inputs @ self.kernel + self.bias
        return np.sum(np.logaddexp(0.0, out))


class LazyNone:
    """Weights start as None and are made on the first call."""

    def __init__(self, hidden):
        self.hidden = hidden
        self.W = None
        self.v = None

    @corpus(lambda rng: Call(LazyNone(4).score, (rng.standard_normal(3),)), state=_layer_state)
    def score(self, x):
        """`if self.W is None: self.W = ...` on a two-layer scorer of one input vector."""
        if self.W is None:
            gen = np.random.default_rng(42)
            self.W = gen.standard_normal((self.hidden, x.shape[0])) * 0.5
            self.v = gen.standard_normal(self.hidden)
        return float(self.v @ np.tanh(self.W @ x))


class CachingDense:
    """CS231n-style layer keeping its input for the backward pass in `self.cache`."""

    def __init__(self, W):
        self.W = W
        self.cache = None

    @corpus(
        lambda rng: Call(CachingDense(rng.standard_normal((3, 2))).forward, (rng.standard_normal((4, 3)),)),
        state=_layer_state,
    )
    def forward(self, x):
        """`self.cache = x` (the differentiated input itself) kept on the layer for a backward pass."""
        self.cache = x
        out = x @ self.W
        return np.sum(out**2)


class Sequential:
    """A list of lazily-initialised layers, applied in a loop."""

    def __init__(self, sizes):
        self.layers = [Dense(n, seed=i) for i, n in enumerate(sizes)]

    def predict(self, X):
        for layer in self.layers:
            if not layer.initialized:
                layer._init_params(X.shape[1])
            X = np.tanh(X @ layer.W + layer.b)
        return X

    @corpus(
        lambda rng: Call(Sequential([4, 2]).loss, (rng.standard_normal((3, 5)), rng.standard_normal((3, 2)))),
        state=lambda call: [_layer_state(Call(layer, ())) for layer in call.fn.__self__.layers],
    )
    def loss(self, X, Y):
        """A Sequential model whose layers initialise themselves when the first batch goes through."""
        return np.mean((self.predict(X) - Y) ** 2)


class LayerNorm:
    """gamma/beta created from the feature size seen on the first call."""

    def __init__(self, eps=1e-5):
        self.eps = eps
        self.gamma = None

    @corpus(lambda rng: Call(LayerNorm(), (rng.standard_normal((3, 4)) * 2 + 1,)), state=_layer_state)
    def __call__(self, x):
        """LayerNorm with `if self.gamma is None:` making gamma and beta from x.shape[-1]; a weighted sum."""
        if self.gamma is None:
            d = x.shape[-1]
            self.gamma = np.linspace(0.5, 1.5, d)
            self.beta = np.zeros(d)
        mu = x.mean(axis=-1, keepdims=True)
        var = x.var(axis=-1, keepdims=True)
        y = self.gamma * (x - mu) / np.sqrt(var + self.eps) + self.beta
        return np.sum(y * np.arange(y.size).reshape(y.shape)) / y.size


class SelfAttention:
    """Single-head self-attention whose projections are made on the first call."""

    def __init__(self, d_k, seed=3):
        self.d_k = d_k
        self.seed = seed
        self.params = {}

    @corpus(lambda rng: Call(SelfAttention(3), (rng.standard_normal((4, 5)),)), state=_layer_state)
    def __call__(self, x):
        """`if not self.params:` fill a params dict with Wq, Wk, Wv; scaled dot-product attention."""
        if not self.params:
            rng = np.random.default_rng(self.seed)
            for name in ("Wq", "Wk", "Wv"):
                self.params[name] = rng.standard_normal((x.shape[1], self.d_k)) / np.sqrt(x.shape[1])
        q = x @ self.params["Wq"]
        k = x @ self.params["Wk"]
        v = x @ self.params["Wv"]
        scores = q @ k.T / np.sqrt(self.d_k)
        scores = scores - scores.max(axis=1, keepdims=True)
        attn = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
        return np.sum((attn @ v) ** 2)


class Embedding:
    """An embedding table made on the first lookup, with a differentiated scale on the embeddings."""

    def __init__(self, vocab, dim):
        self.vocab, self.dim = vocab, dim
        self.initialized = False

    @corpus(
        lambda rng: Call(Embedding(6, 3).forward, (np.array([1, 4, 4, 0]), 1.5, rng.standard_normal(3))),
        argnums=(1, 2),
        state=_layer_state,
    )
    def forward(self, ids, scale, query):
        """`if not self.initialized`; rows looked up by integer ids, scaled, scored against a query."""
        if not self.initialized:
            self.table = np.random.default_rng(7).standard_normal((self.vocab, self.dim))
            self.initialized = True
        emb = scale * self.table[ids]
        logits = emb @ query
        return np.log(np.sum(np.exp(logits)))
