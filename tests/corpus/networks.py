"""Networks as Nielsen's "Neural Networks and Deep Learning" and Karpathy's gists write them:
classes holding lists of weight arrays, feedforward loops, RNN steps over a time loop."""

from __future__ import annotations

import numpy as np

from tests.corpus.registry import Call, corpus


def sigmoid(z):
    """The sigmoid function."""
    return 1.0 / (1.0 + np.exp(-z))


class Network:
    """Nielsen's network.py: biases and weights as lists of column-vector arrays."""

    def __init__(self, sizes, seed=0):
        rng = np.random.default_rng(seed)
        self.num_layers = len(sizes)
        self.sizes = sizes
        self.biases = [rng.standard_normal((y, 1)) for y in sizes[1:]]
        self.weights = [rng.standard_normal((y, x)) / np.sqrt(x) for x, y in zip(sizes[:-1], sizes[1:])]

    def feedforward(self, a):
        """Return the output of the network if ``a`` is input."""
        for b, w in zip(self.biases, self.weights):
            a = sigmoid(np.dot(w, a) + b)
        return a

    @corpus(lambda rng: (Network([3, 4, 2]), rng.standard_normal((3, 1)), np.array([[1.0], [0.0]])))
    def quadratic_cost(self, x, y):
        """Nielsen's network.py: the quadratic cost of one example, in the weights and biases."""
        return 0.5 * np.linalg.norm(self.feedforward(x) - y) ** 2


class CrossEntropyCost:
    """Nielsen's network2.py cost class."""

    @staticmethod
    def fn(a, y):
        return np.sum(np.nan_to_num(-y * np.log(a) - (1 - y) * np.log(1 - a)))


class Network2(Network):
    """Nielsen's network2.py: the cost class kept in `self.cost`, its static `fn` called through it."""

    def __init__(self, sizes, cost=CrossEntropyCost, seed=0):
        super().__init__(sizes, seed)
        self.cost = cost

    @corpus(lambda rng: Call(Network2([4, 5, 3]).total_cost, (rng.standard_normal((6, 4, 1)), rng.integers(0, 3, 6))))
    def total_cost(self, xs, labels, lmbda=0.1):
        """Nielsen's network2.py total_cost: `self.cost.fn(a, y)` over examples plus L2, in the inputs."""
        cost = 0.0
        n = len(xs)
        for x, label in zip(xs, labels):
            a = self.feedforward(x)
            y = np.zeros((self.sizes[-1], 1))
            y[label] = 1.0
            cost += self.cost.fn(a, y) / n
        cost += 0.5 * (lmbda / n) * sum(np.linalg.norm(w) ** 2 for w in self.weights)
        return cost


class MLP:
    """A Karpathy-style MLP: a list of (W, b) layers and a list of activation functions."""

    def __init__(self, sizes, seed=1):
        rng = np.random.default_rng(seed)
        self.layers = [(rng.standard_normal((m, n)) * 0.5, np.zeros(n)) for m, n in zip(sizes[:-1], sizes[1:])]
        self.activations = [np.tanh] * (len(sizes) - 2) + [lambda z: z]

    @corpus(lambda rng: Call(MLP([3, 4, 4, 1]).mse, (rng.standard_normal((5, 3)), rng.standard_normal((5, 1)))))
    def mse(self, X, Y):
        """A regression MLP whose last activation is the identity (two functions in one list), in its input."""
        h = X
        for (W, b), act in zip(self.layers, self.activations):
            h = act(h @ W + b)
        return np.mean((h - Y) ** 2)


def _policy_model(rng):
    model = {"W1": rng.standard_normal((5, 4)) / 2.0, "W2": rng.standard_normal(5) / np.sqrt(5)}
    x = rng.standard_normal(4)
    # keep the hidden pre-activations away from 0, where h[h < 0] = 0 has its kink
    h = model["W1"] @ x
    model["W1"][np.abs(h) < 0.05] *= 3.0
    return model, x, 1.0


@corpus(_policy_model)
def policy_log_prob(model, x, action):
    """Karpathy's pong policy gradient: h[h < 0] = 0 (ReLU), the log-probability of the sampled action."""
    h = np.dot(model["W1"], x)
    h[h < 0] = 0  # ReLU nonlinearity
    logp = np.dot(model["W2"], h)
    p = 1.0 / (1.0 + np.exp(-logp))  # sigmoid function
    return action * np.log(p) + (1 - action) * np.log(1 - p)


def _char_rnn(rng, vocab_size=5, hidden_size=4, T=4):
    params = dict(
        Wxh=rng.standard_normal((hidden_size, vocab_size)) * 0.3,
        Whh=rng.standard_normal((hidden_size, hidden_size)) * 0.3,
        Why=rng.standard_normal((vocab_size, hidden_size)) * 0.3,
        bh=np.zeros((hidden_size, 1)),
        by=np.zeros((vocab_size, 1)),
    )
    inputs = [int(i) for i in rng.integers(0, vocab_size, T)]
    targets = inputs[1:] + [int(rng.integers(0, vocab_size))]
    hprev = rng.standard_normal((hidden_size, 1)) * 0.1
    return params["Wxh"], params["Whh"], params["Why"], params["bh"], params["by"], inputs, targets, hprev


@corpus(_char_rnn, argnums=(0, 1, 2, 3, 4, 7))
def min_char_rnn_loss(Wxh, Whh, Why, bh, by, inputs, targets, hprev):
    """Karpathy's min-char-rnn lossFun: dicts of per-step states keyed by t, xs[t][inputs[t]] = 1."""
    vocab_size = Wxh.shape[1]
    xs, hs, ys, ps = {}, {}, {}, {}
    hs[-1] = np.copy(hprev)
    loss = 0
    for t in range(len(inputs)):
        xs[t] = np.zeros((vocab_size, 1))  # encode in 1-of-k representation
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t - 1]) + bh)  # hidden state
        ys[t] = np.dot(Why, hs[t]) + by  # unnormalized log probabilities for next chars
        ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))  # probabilities for next chars
        loss += -np.log(ps[t][targets[t], 0])  # softmax (cross-entropy loss)
    return loss


@corpus(_char_rnn, argnums=(0, 1, 2, 3, 4, 7))
def char_rnn_loss_one_hot_rows(Wxh, Whh, Why, bh, by, inputs, targets, hprev):
    """min-char-rnn with the one-hot vectors taken as columns of an identity and lists for the states."""
    vocab_size = Wxh.shape[1]
    eye = np.eye(vocab_size)
    hs = [hprev]
    loss = 0.0
    for t, (ix, target) in enumerate(zip(inputs, targets)):
        x = eye[:, [ix]]
        hs.append(np.tanh(Wxh @ x + Whh @ hs[t] + bh))
        y = Why @ hs[-1] + by
        loss -= y[target, 0] - np.log(np.sum(np.exp(y)))
    return loss


def _rnn_seq(rng, T=5, D=3, H=4):
    Wx = rng.standard_normal((H, D)) * 0.4
    Wh = rng.standard_normal((H, H)) * 0.4
    b = 0.1 * rng.standard_normal(H)
    x = rng.standard_normal((T, D))
    return Wx, Wh, b, x


@corpus(_rnn_seq, argnums=(0, 1, 2, 3))
def rnn_hidden_buffer(Wx, Wh, b, x):
    """A vanilla RNN writing each hidden state into a preallocated (T, H) buffer, h[t] = np.tanh(...)."""
    T = x.shape[0]
    H = Wh.shape[0]
    h = np.zeros((T, H))
    for t in range(T):
        prev = h[t - 1] if t > 0 else np.zeros(H)
        h[t] = np.tanh(Wx @ x[t] + Wh @ prev + b)
    return np.sum(h[-1] ** 2) + 0.1 * np.sum(h)


@corpus(_rnn_seq, argnums=(0, 1, 2, 3))
def rnn_forward_cs231n(Wx, Wh, b, x):
    """CS231n rnn_layers.py: rnn_step_forward called from rnn_forward over a (N, T, D) batch."""
    x = x[None]  # a batch of one: (N, T, D)
    N, T, D = x.shape
    H = b.shape[0]
    h0 = np.zeros((N, H))
    h = np.zeros((N, T, H))
    prev_h = h0
    for t in range(T):
        next_h, _ = rnn_step_forward(x[:, t, :], prev_h, Wx.T, Wh.T, b)
        h[:, t, :] = next_h
        prev_h = next_h
    return np.mean(h**2)


def rnn_step_forward(x, prev_h, Wx, Wh, b):
    next_h = np.tanh(x.dot(Wx) + prev_h.dot(Wh) + b)
    cache = (x, prev_h, Wx, Wh, next_h)
    return next_h, cache


def _lstm(rng, T=4, D=2, H=3):
    W = rng.standard_normal((4 * H, H + D)) * 0.3
    b = np.zeros(4 * H)
    b[H : 2 * H] = 1.0  # forget-gate bias
    x = rng.standard_normal((T, D))
    return W, b, x


@corpus(_lstm, argnums=(0, 1, 2))
def lstm_sequence_loss(W, b, x):
    """An LSTM over a sequence, its four gates sliced out of one stacked pre-activation."""
    H = W.shape[0] // 4
    h = np.zeros(H)
    c = np.zeros(H)
    outputs = []
    for t in range(x.shape[0]):
        z = W @ np.concatenate([h, x[t]]) + b
        i = sigmoid(z[:H])
        f = sigmoid(z[H : 2 * H])
        o = sigmoid(z[2 * H : 3 * H])
        g = np.tanh(z[3 * H :])
        c = f * c + i * g
        h = o * np.tanh(c)
        outputs.append(h)
    hs = np.stack(outputs)
    return float(np.sum(hs[-1]) + 0.5 * np.sum(hs**2))


@corpus(lambda rng: (rng.standard_normal((4, 2)) * 0.5, rng.standard_normal((5, 4))), argnums=(0, 1))
def tied_autoencoder(W, X):
    """A tied-weights autoencoder: encode with W, decode with W.T, sigmoid hidden units."""
    hidden = sigmoid(X @ W)
    recon = hidden @ W.T
    return 0.5 * np.sum((recon - X) ** 2) / X.shape[0]


def _gru(rng, T=4, D=2, H=3):
    p = {k: rng.standard_normal((H, D)) * 0.5 for k in ("Wz", "Wr", "Wh")}
    p.update({k: rng.standard_normal((H, H)) * 0.5 for k in ("Uz", "Ur", "Uh")})
    return p, rng.standard_normal((T, D))


@corpus(_gru, argnums=(0, 1))
def gru_final_state(p, xs):
    """A GRU cell unrolled with a for loop over rows of xs, parameters in a dict."""
    h = np.zeros(p["Uz"].shape[0])
    for x in xs:
        z = sigmoid(p["Wz"] @ x + p["Uz"] @ h)
        r = sigmoid(p["Wr"] @ x + p["Ur"] @ h)
        h_tilde = np.tanh(p["Wh"] @ x + p["Uh"] @ (r * h))
        h = (1 - z) * h + z * h_tilde
    return np.sum(h * np.arange(1.0, h.size + 1))
