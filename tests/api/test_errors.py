"""Rejected constructs: the right `ChadError` subclass, raised when a derivative is
first requested (never at decoration), with a message that names the construct and
shows where it is: file name, absolute line number and the offending line's text.
"""

from __future__ import annotations

import math
import re
import traceback

import pytest
import scipy.special

import chadpy as chad
from tests.support.located import assert_located

COUNTER = 0


# ====================================================================== rejected functions


def e_global(x):
    global COUNTER
    return x * 2.0


def e_try(x):
    try:
        y = x * 2.0
    except ValueError:
        y = x
    return y


def e_with(x):
    with open(__file__):
        return x * 2.0


def e_yield(x):
    yield x * 2.0


def e_yield_assign(x):
    y = yield x * 2.0
    return y


async def e_async(x):
    return x * 2.0


def e_class(x):
    class Box:
        pass

    return x * 2.0


def e_class_reads(x):
    class Box:
        y = x * 2.0

    return Box.y


def e_del(x):
    y = x * 2.0
    del y
    return x


def e_star_params(x):
    def g(*args):
        return args[0]

    return g(x) * 2.0


def e_star_kwargs(x):
    def g(y, **kwargs):
        return y

    return g(x) * 2.0


def e_star_call(x, y):
    p = (x, y)
    return math.hypot(*p)


def e_eval(x):
    return eval("x") * x


def e_exec(x):
    exec("z = 1")
    return x * 2.0


def e_ellipk(x):
    return scipy.special.ellipk(x) * 2.0


def e_bessel(v, x):
    return scipy.special.jv(v, x)


def e_subscript_assign(p):
    p[0] = 1.0
    return p[1]


def e_attribute_assign(x):
    x.real = 1.0
    return x


def e_for_else(x):
    y = 0.0
    for _ in range(3):
        y = y + x
    else:
        y = y * 2.0
    return y


def e_while_else(x):
    y = x
    while y < 10.0:
        y = y * 2.0
    else:
        y = y + 1.0
    return y


def e_nonlocal(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v

    add(x)
    return total


def e_set(x):
    v = {x, x}
    return x * 2.0 + len(v)


def e_one_branch(x):
    if x > 0.0:
        z = x * x
    return z


def e_returns_pair(x):
    return (x, x * 2.0)


def e_returns_whole_number(x):
    return 3


# ====================================================================== cases


@chad.reverse
def decorated_class(x):
    class Box:
        y = x * 2.0

    return Box.y


# (function, example args, expected class, a word of the construct's description,
#  text of the offending line, other acceptable offending lines)
CASES = [
    (e_class_reads, (1.0,), chad.ChadTypeError, "reads `x`, which carries a derivative here", "class Box:"),
    (e_with, (1.0,), chad.UnsupportedSyntax, "inside a `with`", "with open(__file__):"),
    (e_yield, (1.0,), chad.UnsupportedSyntax, "yield", "yield x * 2.0"),
    (e_yield_assign, (1.0,), chad.UnsupportedSyntax, "yield", "y = yield x * 2.0"),
    (e_async, (1.0,), chad.UnsupportedSyntax, "async", "async def e_async(x):"),
    (e_star_params, (1.0,), chad.UnsupportedSyntax, "*args", "def g(*args):"),
    (e_star_kwargs, (1.0,), chad.UnsupportedSyntax, "**kwargs", "def g(y, **kwargs):"),
    (e_star_call, (1.0, 2.0), chad.UnsupportedSyntax, "star-arg", "return math.hypot(*p)"),
    (e_eval, (1.0,), chad.UnknownFunction, "eval", 'return eval("x") * x'),
    (e_exec, (1.0,), chad.UnknownFunction, "exec", 'exec("z = 1")'),
    (e_ellipk, (0.5,), chad.UnknownFunction, "scipy.special.ellipk", "return scipy.special.ellipk(x) * 2.0"),
    (e_bessel, (1.5, 2.0), chad.UnknownFunction, "scipy.special.jv", "return scipy.special.jv(v, x)"),
    (e_subscript_assign, ((1.0, 2.0),), chad.ChadTypeError, "element of a tuple", "p[0] = 1.0"),
    (e_attribute_assign, (1.0,), chad.ChadTypeError, "reads `x`, which carries a derivative", "x.real = 1.0"),
    (e_for_else, (1.0,), chad.UnsupportedSyntax, "for ... else", "for _ in range(3):"),
    (e_while_else, (1.0,), chad.UnsupportedSyntax, "while ... else", "while y < 10.0:"),
    (e_nonlocal, (1.0,), chad.UnsupportedSyntax, "nonlocal", "nonlocal total"),
    (e_set, (1.0,), chad.UnsupportedSyntax, "set", "v = {x, x}"),
    # no line of these is wrong by itself: the `def` line or the `return` line will do
    (e_returns_pair, (1.0,), chad.ChadTypeError, "tuple", "return (x, x * 2.0)", "def e_returns_pair(x):"),
    (e_returns_whole_number, (1.0,), chad.ChadTypeError, "int", "return 3", "def e_returns_whole_number(x):"),
]


def _ids(cases):
    return [c[0].__name__ for c in cases]


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
@pytest.mark.parametrize("simplify", [True, False])
def test_rejected_construct(case, simplify):
    fn, args, cls, description, *lines = case
    with pytest.raises(chad.ChadError) as info:
        chad.grad(fn, argnums=tuple(range(len(args))), simplify=simplify)(*args)
    err = info.value
    assert type(err) is cls, f"expected {cls.__name__}, got {type(err).__name__}: {err}"
    message = str(err)
    headline = message.split("\n")[0]  # the description proper, before the location
    assert description in headline, f"{description!r} missing from the description:\n{message}"
    assert_located(message, fn, *lines)


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_rejected_construct_through_every_entry_point(case):
    fn, args, cls, *_ = case
    decorated = chad.reverse(fn)  # decorating alone never raises
    grad_fn = chad.grad(fn)  # nor does building the gradient function
    value_and_grad_fn = chad.value_and_grad(decorated)
    assert grad_fn is not None and value_and_grad_fn is not None
    with pytest.raises(cls):
        decorated.grad(*args)
    with pytest.raises(cls):
        decorated.value_and_grad(*args)
    if cls is not chad.ChadTypeError:  # vjp of a tuple or an int output is fine
        with pytest.raises(cls):
            decorated.vjp(*args)
        with pytest.raises(cls):
            chad.vjp(fn, *args, simplify=False)
        with pytest.raises(cls):
            chad.source(fn, *args)


def test_error_is_a_chad_error_subclass():
    for cls in (chad.UnsupportedSyntax, chad.UnknownFunction, chad.ChadTypeError):
        assert issubclass(cls, chad.ChadError)
        assert issubclass(cls, Exception)


def test_decorating_never_raises_and_the_original_still_runs():
    assert decorated_class(1.5) == 3.0
    with pytest.raises(chad.ChadTypeError, match="class"):
        decorated_class.grad(1.5)
    # the failed derivative does not break the original function
    assert decorated_class(2.5) == 5.0
    with pytest.raises(chad.ChadTypeError, match="class"):
        decorated_class.grad(1.5)


@pytest.mark.parametrize(
    ("fn", "args", "expected"),
    [
        (e_global, (1.5,), 3.0),
        (e_try, (1.5,), 3.0),
        (e_class, (1.5,), 3.0),
        (e_del, (1.5,), 1.5),
        (e_star_params, (1.5,), 3.0),
        (e_star_kwargs, (1.5,), 3.0),
        (e_star_call, (3.0, 4.0), 5.0),
        (e_eval, (1.5,), 2.25),
        (e_ellipk, (0.25,), scipy.special.ellipk(0.25) * 2.0),
        (e_bessel, (1.5, 2.0), scipy.special.jv(1.5, 2.0)),
        (e_for_else, (1.5,), 9.0),
        (e_while_else, (1.5,), 13.0),
        (e_nonlocal, (1.5,), 1.5),
        (e_set, (1.5,), 4.0),
        (e_one_branch, (1.5,), 2.25),
        (e_returns_pair, (1.5,), (1.5, 3.0)),
        (e_returns_whole_number, (1.5,), 3),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_decorated_rejected_function_still_callable(fn, args, expected):
    decorated = chad.reverse(fn)
    assert decorated(*args) == expected == fn(*args)


def test_decorated_generator_and_coroutine_still_callable():
    assert list(chad.reverse(e_yield)(1.5)) == [3.0]
    coro = chad.reverse(e_async)(1.5)
    try:
        coro.send(None)
    except StopIteration as stop:
        assert stop.value == 3.0
    else:  # pragma: no cover
        raise AssertionError("the coroutine did not finish")


def test_vjp_of_tuple_and_int_outputs_is_allowed():
    y, pullback = chad.vjp(e_returns_pair, 1.5)
    assert y == (1.5, 3.0)
    assert pullback((1.0, 1.0)) == (3.0,)
    y, pullback = chad.vjp(e_returns_whole_number, 1.5)
    assert y == 3
    assert pullback(None) == (0.0,)


# ====================================================================== messages


def helper_with_a_with(x):
    with open(__file__):
        return x


def calls_the_helper(x):
    return helper_with_a_with(x) * 2.0


def square_root(x):
    return math.sqrt(x) * 2.0


def test_an_error_in_a_callee_names_the_users_call():
    with pytest.raises(chad.UnsupportedSyntax) as info:
        chad.grad(calls_the_helper)(1.0)
    message = str(info.value)
    assert_located(message, calls_the_helper, "return helper_with_a_with(x) * 2.0")
    assert_located(message, helper_with_a_with, "with open(__file__):")


def test_api_misuse_names_the_users_line():
    with pytest.raises(chad.ChadError) as info:
        chad.grad(square_root, argnums=3)(1.0)
    assert info.value.loc is not None and info.value.loc.filename == __file__
    assert "argnums=3" in info.value.loc.line


def _chadpy_frames(error: BaseException) -> list[str]:
    files = [frame.filename for frame in traceback.extract_tb(error.__traceback__)]
    return [f for f in files if f.startswith(chad.__path__[0])]


def test_tracebacks_leave_out_chadpys_frames(monkeypatch):
    monkeypatch.delenv("CHADPY_TRACEBACK", raising=False)
    with pytest.raises(ZeroDivisionError) as info:
        chad.grad(square_root)(0.0)  # d/dx sqrt at 0: a float division by zero in the backward pass
    assert len(_chadpy_frames(info.value)) == 1  # the entry point's `raise`, whose line says how to see them
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "return math.sqrt(x) * 2.0" in notes and __file__ in notes
    monkeypatch.setenv("CHADPY_TRACEBACK", "full")
    with pytest.raises(ZeroDivisionError) as info:
        chad.grad(square_root)(0.0)
    assert len(_chadpy_frames(info.value)) > 1  # the gradient function's call of the derivative too


def test_a_function_without_a_module(tmp_path):
    """A function exec'd in a namespace without `__name__` has `__module__` None: chadpy raised
    AttributeError deciding whether it was one of its own (found writing docs/design.md's test)."""
    path = tmp_path / "no_module.py"
    path.write_text("def cube(x):\n    return x * x * x\n")
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    assert namespace["cube"].__module__ is None
    assert chad.grad(namespace["cube"])(2.0) == 12.0


def sum_sorted_squares(xs):
    return sum([v * v for v in sorted(xs)])


def test_a_desugared_loop_is_located_at_its_own_line():
    """The loop `sorted(xs)` hides was shown under the `def` line: the element it writes had no location
    (found reading the golden files, issue 13). Every statement's line is now the user's `return` line."""
    source = chad.source(sum_sorted_squares, [1.0, 3.0, 2.0])
    lines = {m for m in re.findall(r"# line (\d+):", source)}
    assert lines == {str(sum_sorted_squares.__code__.co_firstlineno + 1)}
