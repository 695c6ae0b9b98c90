"""GradBench's `lstm` eval: ADBench's LSTM with diagonal weights, its loss predicting each character of
a text (as bits) from the ones before it (`objective`), and the gradient of that loss in main_params
and extra_params (`jacobian`, from chadpy), flattened row by row and concatenated.

For l layers and b bits per character: main_params (2l, 4b) holds per layer a row of weights and a row
of biases for the forget, input, output and change gates; extra_params (3, b) the input weight, the
output weight and the output bias; state (2l, b) per layer the initial hidden and cell; sequence (c, b)
the characters.
"""

from __future__ import annotations

import numpy as np
from protocol import Function

import chadpy as chad


def sigmoid(z):
    """The logistic function."""
    return 1.0 / (1.0 + np.exp(-z))


def layer(weight, bias, hidden, cell, x):
    """One step of one layer: its new hidden and cell from the input x. The forget and output gates
    read the input, the input and change gates the hidden (diagonal weights, ADBench's quirk)."""
    b = len(hidden)
    gates = np.concatenate((x, hidden, x, hidden)) * weight + bias
    forget = sigmoid(gates[:b])
    ingate = sigmoid(gates[b : 2 * b])
    outgate = sigmoid(gates[2 * b : 3 * b])
    change = np.tanh(gates[3 * b :])
    cell = cell * forget + ingate * change
    hidden = outgate * np.tanh(cell)
    return hidden, cell


def objective(main_params, extra_params, state, sequence):
    """The mean over the c - 1 predictions and the b bits of minus the log-probability of the next
    character's bits (ADBench's normalisation: log of the sum of the exponentials plus 2)."""
    c, b = sequence.shape
    layers = len(main_params) // 2
    hidden = [state[2 * i] for i in range(layers)]
    cell = [state[2 * i + 1] for i in range(layers)]
    total = 0.0
    for t in range(c - 1):
        x = sequence[t] * extra_params[0]
        for i in range(layers):
            hidden[i], cell[i] = layer(main_params[2 * i], main_params[2 * i + 1], hidden[i], cell[i], x)
            x = hidden[i]
        ypred = x * extra_params[1] + extra_params[2]
        ynorm = ypred - np.log(np.sum(np.exp(ypred)) + 2.0)
        total = total + np.sum(sequence[t + 1] * ynorm)
    return -total / ((c - 1) * b)


def prepare(input):
    """The eval's input as objective's arguments."""
    return tuple(
        np.asarray(input[name], dtype=np.float64) for name in ("main_params", "extra_params", "state", "sequence")
    )


gradient = chad.grad(objective, argnums=(0, 1))


def encode_gradient(grads):
    """The gradients of main_params and extra_params, each flattened row by row, concatenated."""
    return np.concatenate([g.ravel() for g in grads]).tolist()


FUNCTIONS = {
    "objective": Function(objective, prepare=prepare, encode=float),
    "jacobian": Function(gradient, prepare=prepare, encode=encode_gradient),
}
