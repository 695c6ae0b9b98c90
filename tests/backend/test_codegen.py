"""Printing target expressions as Python text (`chadpy/codegen.py`): parentheses by precedence.

The printer decides parentheses itself, so each printed expression is parsed back and must be
the tree it was printed from: a missing pair would regroup the operands, an extra one is
harmless to Python but shows up in the golden files.
"""

from __future__ import annotations

import ast
import math
import random

import pytest

from chadpy.backend.codegen import expr_text
from chadpy.names import Globals
from chadpy.target.expressions import Attr, BinOp, CallX, Compare, Expr, IfExp, Item, Lit, Name, TupleX, UnaryOp

_BINARY = ["+", "-", "*", "/", "//", "%", "**", "@"]
_COMPARE = {"<": ast.Lt, "<=": ast.LtE, "==": ast.Eq, "is": ast.Is, "is not": ast.IsNot, "not in": ast.NotIn}
_AST_BINARY = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.MatMult: "@",
}


def random_expr(rng: random.Random, depth: int) -> Expr:
    if depth == 0 or rng.random() < 0.2:
        return rng.choice([Name(rng.choice("abc")), Lit(rng.choice([2, -3, 0.5, -1.5, 7]))])
    kind = rng.randrange(8)
    sub = lambda: random_expr(rng, depth - 1)  # noqa: E731
    if kind < 3:
        return BinOp(rng.choice(_BINARY), sub(), sub())
    if kind == 3:
        return UnaryOp(rng.choice(["-", "+", "not"]), sub())
    if kind == 4:
        return Compare(rng.choice(list(_COMPARE)), sub(), sub())
    if kind == 5:
        return IfExp(sub(), sub(), sub())
    if kind == 6:
        return Attr(sub(), "real") if rng.random() < 0.5 else CallX(sub(), [sub()], {"k": sub()})
    return Item(sub(), TupleX([sub(), sub()])) if rng.random() < 0.5 else TupleX([sub()])


def shape(e: Expr) -> object:
    """The tree as nested tuples (a negative literal is a minus applied to its absolute value)."""
    if isinstance(e, Name):
        return ("name", e.id)
    if isinstance(e, Lit):
        return ("-", ("lit", -e.value)) if e.value < 0 else ("lit", e.value)
    if isinstance(e, BinOp):
        return (e.op, shape(e.left), shape(e.right))
    if isinstance(e, UnaryOp):
        return (e.op, shape(e.operand))
    if isinstance(e, Compare):
        return (e.op, shape(e.left), shape(e.right))
    if isinstance(e, IfExp):
        return ("if", shape(e.test), shape(e.body), shape(e.orelse))
    if isinstance(e, Attr):
        return ("attr", shape(e.value), e.attr)
    if isinstance(e, CallX):
        return ("call", shape(e.func), tuple(map(shape, e.args)), tuple((k, shape(v)) for k, v in e.keywords.items()))
    if isinstance(e, Item):
        return ("item", shape(e.value), shape(e.index))
    return ("tuple", tuple(map(shape, e.items)))


def parsed_shape(node: ast.AST) -> object:
    """The same nested tuples, from the tree Python parses."""
    if isinstance(node, ast.Name):
        return ("name", node.id)
    if isinstance(node, ast.Constant):
        return ("lit", node.value)
    if isinstance(node, ast.BinOp):
        return (_AST_BINARY[type(node.op)], parsed_shape(node.left), parsed_shape(node.right))
    if isinstance(node, ast.UnaryOp):
        op = {ast.USub: "-", ast.UAdd: "+", ast.Not: "not"}[type(node.op)]
        return (op, parsed_shape(node.operand))
    if isinstance(node, ast.Compare):
        (op,), (right,) = node.ops, node.comparators
        name = next(k for k, v in _COMPARE.items() if isinstance(op, v))
        return (name, parsed_shape(node.left), parsed_shape(right))
    if isinstance(node, ast.IfExp):
        return ("if", parsed_shape(node.test), parsed_shape(node.body), parsed_shape(node.orelse))
    if isinstance(node, ast.Attribute):
        return ("attr", parsed_shape(node.value), node.attr)
    if isinstance(node, ast.Call):
        keywords = tuple((k.arg, parsed_shape(k.value)) for k in node.keywords)
        return ("call", parsed_shape(node.func), tuple(map(parsed_shape, node.args)), keywords)
    if isinstance(node, ast.Subscript):
        return ("item", parsed_shape(node.value), parsed_shape(node.slice))
    assert isinstance(node, ast.Tuple), ast.dump(node)
    return ("tuple", tuple(map(parsed_shape, node.elts)))


@pytest.mark.parametrize("seed", range(20))
def test_a_printed_expression_parses_back_to_its_own_tree(seed):
    rng = random.Random(seed)
    for _ in range(100):
        e = random_expr(rng, 4)
        text = expr_text(e, Globals(set()))
        assert parsed_shape(ast.parse(text, mode="eval").body) == shape(e), text


@pytest.mark.parametrize(
    "e, value",
    [
        (BinOp("**", Name("a"), Lit(-2)), 0.25),  # not `a ** -2 ` read as anything else
        (BinOp("**", Lit(-2), Name("a")), 4),  # (-2) ** 2, not -(2 ** 2)
        (BinOp("-", Name("a"), BinOp("-", Name("a"), Lit(1))), 1),
        (BinOp("**", BinOp("**", Name("a"), Lit(3)), Lit(2)), 64),  # (a ** 3) ** 2, not a ** 9
        (Attr(Lit(3), "real"), 3),  # `3 .real`
        (BinOp("*", Lit(-math.inf), Name("a")), -math.inf),
    ],
)
def test_a_printed_expression_computes_what_its_tree_means(e, value):
    ns = Globals(set())
    text = expr_text(e, ns)
    assert eval(text, dict(ns.bindings), {"a": 2}) == value, text
