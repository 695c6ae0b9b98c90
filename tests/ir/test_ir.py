"""The core IR as a language of its own: its printer (typed, `let ... in`) and its verifier."""

import math

import numpy as np
import pytest

import chadpy as chad
from chadpy.__main__ import main
from chadpy.ir import nodes as ir
from chadpy.ir.verify import IRError, verify
from chadpy.lower.lowerer import Lowerer
from tests.support.fd import assert_grad_matches_fd


def loop_sum(x, A):
    s = 0.0
    for i in range(3):
        if x > i:
            s = s + np.sum(A * x)
    return s


def test_typed_ir_shows_every_binder_with_its_type():
    text = chad.source(loop_sum, 1.0, np.ones((2, 2)), stage="ir")
    assert "def loop_sum(x: float', A: array[2, float]'):" in text
    assert "let s: float = 0.0" in text  # a constant: no derivative flows through it
    assert "loop for i: int in indices" in text
    assert "let cond: bool = gt(x, i)" in text
    assert "let mul: array[2, float]' = mul(A, x)" in text
    assert "case cond of" in text and "next <" in text


def test_typed_ir_lists_each_specialisation_of_a_callee():
    def square(v):
        return v * v

    def caller(x, a):
        return square(x) + np.sum(square(a))

    text = chad.source(caller, 2.0, np.ones(3), stage="ir")
    assert "# caller_chad: (float', array[1, float]') -> float'" in text
    assert "def square(v: float'):" in text  # called with the differentiated float
    assert "def square(v: array[1, float]'):" in text  # and with the array: a second specialisation


def test_cli_prints_the_ir(tmp_path, capsys):
    path = tmp_path / "m.py"
    path.write_text("import math\n\ndef f(x):\n    return math.sin(x) * x\n")
    assert main(["show", f"{path}:f", "0.5", "--stage", "ir"]) == 0
    out = capsys.readouterr().out
    assert "def f(x: float'):" in out
    assert "let sin: float' = math.sin(x)" in out


def _fn(params, lets, result):
    return ir.Function("broken", params, ir.Block(lets, result), None, None)


@pytest.mark.parametrize(
    "fn, message",
    [
        (_fn(["x"], [ir.Let("x", ir.Const(1.0))], ir.Var("x")), "`x` is bound twice"),
        (_fn(["x"], [ir.Let("y", ir.MakeTuple([ir.MakeTuple([])]))], ir.Var("y")), "not an atom"),
        (_fn(["x"], [], ir.Var("z")), "`z` is read where it is not bound"),
        (  # a name a branch binds is not visible after the case
            _fn(
                ["c"],
                [
                    ir.Let(
                        "r",
                        ir.Case(
                            ir.Var("c"), ir.Block([ir.Let("t", ir.Const(1))], ir.Var("t")), ir.Block([], ir.Var("c"))
                        ),
                    )
                ],
                ir.Var("t"),
            ),
            "`t` is read where it is not bound",
        ),
        (  # nor in the other branch
            _fn(
                ["c"],
                [
                    ir.Let(
                        "r",
                        ir.Case(
                            ir.Var("c"), ir.Block([ir.Let("t", ir.Const(1))], ir.Var("t")), ir.Block([], ir.Var("t"))
                        ),
                    )
                ],
                ir.Var("r"),
            ),
            "`t` is read where it is not bound",
        ),
        (  # a loop's next state is read in its body's scope; its state is not visible after it
            _fn(
                ["n"],
                [
                    ir.Let(
                        "out",
                        ir.ForLoop(
                            state=["s"],
                            init=[ir.Const(0)],
                            index="k",
                            seq=ir.Var("n"),
                            body=ir.Block([], ir.Const(None)),
                            next=[ir.Var("k")],
                        ),
                    )
                ],
                ir.Var("s"),
            ),
            "`s` is read where it is not bound",
        ),
    ],
)
def test_verifier_rejects_broken_ir(fn, message):
    with pytest.raises(IRError, match=message):
        verify(fn)


def test_verifier_checks_lifted_functions_are_closed():
    lifted = ir.Function("inner", ["env", "y"], ir.Block([], ir.Var("x")), None, None)
    outer = _fn(["x"], [ir.Let("g", ir.MakeClosure(lifted, [ir.Var("x")]))], ir.Var("g"))
    with pytest.raises(IRError, match="in the IR of `inner`: `x` is read where it is not bound"):
        verify(outer)


def test_every_lowering_is_verified(monkeypatch):
    """A lowering that produced broken IR stops there, before types or CHAD see it."""
    original = Lowerer.function

    def broken(self):
        f = original(self)
        f.body.lets.append(ir.Let(f.params[0], ir.Const(0.0)))  # bind a parameter again
        return f

    monkeypatch.setattr(Lowerer, "function", broken)

    def f(x):
        return math.sin(x)

    with pytest.raises(IRError, match="bound twice"):
        chad.grad(f)(0.3)


def test_ir_of_every_construct_verifies_and_differentiates():
    """Lists, dicts, closures, while loops with break, comprehensions: lowered, verified, right."""

    def many(x, xs):
        ys = [v * x for v in xs if v > 0.0]
        d = {"a": x, "b": ys[0]}
        scale = lambda t: t * d["a"]  # noqa: E731
        k, total = 0, 0.0
        while k < len(ys):
            if ys[k] > 10.0:
                break
            total += scale(ys[k])
            k += 1
        return total + sorted(ys)[0] + max(xs, key=lambda v: -v)

    assert_grad_matches_fd(many, (1.5, [0.5, -1.0, 2.0]), argnums=(0, 1))
