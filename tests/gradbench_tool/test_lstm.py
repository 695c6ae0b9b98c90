"""The `lstm` eval module, through the JSON path GradBench sees: the loss against a one-step case
worked by hand and against an element-by-element loop over the flat parameter layout of the C++
reference, the gradient against a closed form for one step and central differences of the loss."""

from __future__ import annotations

import json
import math

import lstm
import numpy as np
import protocol
import pytest

from tests.support import fd


def make_input(seed, layers, c, b):
    """A seeded input in the eval's JSON format: parameters and state uniform in [0, 1), the
    sequence random bits (GradBench encodes a text's characters as bits)."""
    rng = np.random.default_rng(seed)
    return {
        "main_params": rng.random((2 * layers, 4 * b)).tolist(),
        "extra_params": rng.random((3, b)).tolist(),
        "state": rng.random((2 * layers, b)).tolist(),
        "sequence": rng.integers(0, 2, size=(c, b)).astype(float).tolist(),
        "min_runs": 1,
        "min_seconds": 0,
    }


def run(function, input):
    """What the tool answers GradBench for this function at this input."""
    response = protocol.evaluate(lstm.FUNCTIONS[function], input)
    assert response["success"] and len(response["timings"]) == 1
    output = response["output"]
    assert json.loads(json.dumps(output)) == output
    return output


def sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z))


def loss_by_elements(input):
    """The loss computed one float at a time from flat row-major copies of the arrays, indexing them
    as the C++ reference does: layer i's weights at 8bi, its biases at 8bi + 4b, the gates in the
    order forget, input, output, change; layer i's hidden at 2bi, its cell at 2bi + b."""
    main = [v for row in input["main_params"] for v in row]
    extra = [v for row in input["extra_params"] for v in row]
    state = [v for row in input["state"] for v in row]
    sequence = input["sequence"]
    c, b, layers = len(sequence), len(sequence[0]), len(input["main_params"]) // 2
    total = 0.0
    for t in range(c - 1):
        x = [sequence[t][j] * extra[j] for j in range(b)]
        for i in range(layers):
            w, bias, h, cell = 8 * b * i, 8 * b * i + 4 * b, 2 * b * i, 2 * b * i + b
            for j in range(b):
                forget = sigmoid(x[j] * main[w + j] + main[bias + j])
                ingate = sigmoid(state[h + j] * main[w + b + j] + main[bias + b + j])
                outgate = sigmoid(x[j] * main[w + 2 * b + j] + main[bias + 2 * b + j])
                change = math.tanh(state[h + j] * main[w + 3 * b + j] + main[bias + 3 * b + j])
                state[cell + j] = state[cell + j] * forget + ingate * change
                state[h + j] = outgate * math.tanh(state[cell + j])
            x = state[h : h + b]
        ypred = [x[j] * extra[b + j] + extra[2 * b + j] for j in range(b)]
        lse = math.log(sum(math.exp(y) for y in ypred) + 2.0)
        total += sum(sequence[t + 1][j] * (ypred[j] - lse) for j in range(b))
    return -total / ((c - 1) * b)


def one_step(input):
    """For one layer, one bit and two characters: (the loss, its derivatives in the output weight
    and the output bias), by hand."""
    (wf, wi, wo, wc), (bf, bi, bo, bc) = input["main_params"]
    (w_in,), (w_out,), (b_out,) = input["extra_params"]
    (h,), (cell,) = input["state"]
    (s0,), (s1,) = input["sequence"]
    x = s0 * w_in
    cell = cell * sigmoid(x * wf + bf) + sigmoid(h * wi + bi) * math.tanh(h * wc + bc)
    h = sigmoid(x * wo + bo) * math.tanh(cell)
    y = h * w_out + b_out
    loss = -s1 * (y - math.log(math.exp(y) + 2.0))
    d_y = -s1 * 2.0 / (math.exp(y) + 2.0)  # d/dy of -s1 (y - log(e^y + 2))
    return loss, d_y * h, d_y


def test_one_step_by_hand():
    input = make_input(3, 1, 2, 1)
    input["sequence"] = [[1.0], [1.0]]
    loss, d_w_out, d_b_out = one_step(input)
    output = run("objective", input)
    assert type(output) is float
    assert output == pytest.approx(loss, rel=1e-12)
    gradient = run("jacobian", input)
    assert type(gradient) is list and len(gradient) == 8 + 3
    assert all(type(v) is float for v in gradient)
    # main_params' 8 entries first, then extra_params' rows: in weight, out weight, out bias
    assert gradient[9] == pytest.approx(d_w_out, rel=1e-12)
    assert gradient[10] == pytest.approx(d_b_out, rel=1e-12)


@pytest.mark.parametrize("layers, c, b", [(1, 4, 3), (2, 6, 4), (3, 3, 2)])
def test_objective_matches_the_elementwise_reference(layers, c, b):
    input = make_input(10 * layers + c, layers, c, b)
    output = run("objective", input)
    assert type(output) is float
    assert output == pytest.approx(loss_by_elements(input), rel=1e-12)


@pytest.mark.parametrize("layers, c, b", [(1, 4, 3), (2, 5, 3)])
def test_jacobian_matches_finite_differences(layers, c, b):
    input = make_input(7 * layers + c, layers, c, b)
    output = run("jacobian", input)
    assert type(output) is list and len(output) == 2 * layers * 4 * b + 3 * b
    assert all(type(v) is float for v in output)
    args = lstm.prepare(input)
    expected = [fd.central_diff(lstm.objective, args, i) for i in (0, 1)]
    # the flattening GradBench expects: each gradient row after row, main_params' first
    flat = np.concatenate([g.ravel() for g in expected])
    fd.assert_close(np.array(output), flat, rtol=1e-6, atol=1e-8)
