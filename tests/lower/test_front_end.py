"""Each front-end pass on its own: scope's analyses, resolve's cases, desugar's loops, closure conversion."""

import importlib.util
import inspect
import math
import textwrap

import gast
import numpy as np
import pytest

import chadpy as chad
from chadpy.errors import UnsupportedSyntax
from chadpy.ir import nodes as ir
from chadpy.lower.outside import Resolver
from chadpy.pipeline import lower_code as lower_function
from chadpy.read import scope
from chadpy.read.source import Watch, parse_function
from tests.support.fd import assert_grad_matches_fd
from tests.support.located import assert_located

SCALE = 2.5


def _stmts(code: str) -> list[gast.stmt]:
    return gast.parse(code).body


def _lets(block: ir.Block):
    """Every let of a block and of the blocks nested in it."""
    for let in block.lets:
        yield let
        for b in ir.blocks(let.expr):
            yield from _lets(b)


# ---------------------------------------------------------------- scope


def test_scope_liveness_follows_jumps():
    body = _stmts("a = x\nb = a + y\nc = b")
    assert scope.live_in(body, {"c"}) == {"x", "y"}
    assert scope.live_in(body[1:], {"c"}) == {"a", "y"}
    assert scope.assigned(body) == {"a", "b", "c"}


def test_scope_outline_is_the_walk_without_expressions():
    # outline skips expressions (where no statement can be) and keeps walk's order: the passes that
    # look for a statement or a `def` with it (copies, views, functions) find what a full walk finds
    code = (
        "def f(x, g=lambda t: t):\n"
        "    ys = [v * 2 for v in x]\n"
        "    with open(p) as fh:\n"
        "        try:\n"
        "            def h(z=1):\n"
        "                return [lambda: w for w in z]\n"
        "        except ValueError as e:\n"
        "            zs = ys\n"
        "    for i in x:\n"
        "        if i:\n"
        "            class C:\n"
        "                def m(self):\n"
        "                    return self\n"
        "    return h\n"
    )
    tree = gast.parse(code)
    inside_expressions = {id(n) for e in scope.walk(tree) if isinstance(e, gast.expr) for n in scope.walk(e)}
    expected = [n for n in scope.walk(tree) if id(n) not in inside_expressions]
    assert list(scope.outline(tree)) == expected
    assert [f.name for f in scope.functions(tree)] == ["f", "h", "m"]


def test_scope_free_names_leave_out_parameters_and_comprehension_variables():
    (fn,) = _stmts("def g(t):\n    return sum(t * v for v in vs) + w")
    assert scope.free_names(fn) == {"sum", "vs", "w"}


# ---------------------------------------------------------------- resolve


def uses_outside(x):
    return math.sin(x) * SCALE + np.pi


def test_resolve_names_and_module_paths():
    parsed = parse_function(uses_outside)
    resolver = Resolver(parsed, Watch(), {"x"})
    call = parsed.tree.body[0].value.left.left  # math.sin(x)
    assert resolver.callee(call.func, {}) == ("math.sin", math.sin)
    assert resolver.outside("SCALE", SCALE, call) == ir.Ref("SCALE", SCALE)
    assert isinstance(resolver.outside("math.sin", math.sin, call), ir.MakeClosure)  # a primitive as a value
    assert resolver.is_local(gast.Name("x", gast.Load(), None, None), {})
    assert resolver.outside("parsed", parsed, call) == ir.Ref("parsed", parsed)  # any object: data

    class Rule:
        def __call__(self, t):
            return t

    rule = Rule()  # an object of a user class with `__call__`: data, called through its method
    assert resolver.outside("rule", rule, call) == ir.Ref("rule", rule)
    with pytest.raises(UnsupportedSyntax, match="`vectorized` is a function chadpy has no rule for"):
        resolver.outside("vectorized", np.vectorize(abs), call)  # a library's callable object


# ---------------------------------------------------------------- desugar


def comprehension(xs, k):
    return [x * k for x in xs if x > 0.0]


def reduce_with_enumerate(xs):
    total = 0.0
    for i, x in enumerate(xs, 1):
        total = total + i * x
    return total


def test_a_comprehension_is_a_loop_that_appends_to_a_new_list():
    f = lower_function(comprehension, Watch())
    loops = [let.expr for let in _lets(f.body) if isinstance(let.expr, ir.ForLoop)]
    assert len(loops) == 1
    (state,) = loops[0].init
    start = next(let.expr for let in _lets(f.body) if let.target == state.name)
    assert start == ir.MakeList([])
    appends = [let.expr for let in _lets(loops[0].body) if isinstance(let.expr, ir.Prim) and let.expr.inplace]
    assert [p.op.name for p in appends] == ["append"]


def test_enumerate_counts_positions_and_reads_elements():
    f = lower_function(reduce_with_enumerate, Watch())
    (loop,) = [let.expr for let in _lets(f.body) if isinstance(let.expr, ir.ForLoop)]
    reads = [let.expr for let in loop.body.lets if isinstance(let.expr, ir.Index)]
    # the position's place in the sequence's positions (a dict's: its keys), then the element there
    position, element = reads
    assert position.natural and position.index == ir.Var(loop.index)
    assert element.of_loop and element.index == ir.Var([let.target for let in loop.body.lets][0])


# ---------------------------------------------------------------- closures


def closure_user(x, y):
    g = lambda t: t * x + y  # noqa: E731
    return g(1.0) + g(2.0)


def test_closure_conversion_makes_closed_code_and_captures_values():
    f = lower_function(closure_user, Watch())
    (made,) = [let.expr for let in f.body.lets if isinstance(let.expr, ir.MakeClosure)]
    assert made.captured == [ir.Var("x"), ir.Var("y")]
    assert made.code.captured == ("x", "y") and made.code.params[1:] == ["t"]
    applies = [let.expr for let in f.body.lets if isinstance(let.expr, ir.Apply)]
    assert len(applies) == 2


def late_binding(xs):
    fs = []
    for x in xs:
        fs.append(lambda t: t * x)  # noqa: B023  the late binding chadpy rejects
    return fs[0](1.0)


def test_closures_reject_a_capture_python_would_read_later():
    with pytest.raises(UnsupportedSyntax, match="assigned again later"):
        lower_function(late_binding, Watch())


# ---------------------------------------------------------------- source


LAYOUTS = '''
def tag(*labels):
    return lambda f: f


def plain(x):
    return x * x
# a comment at column 0 after the function


@tag("first")
@tag()
def decorated(x):
    return x * x


def long_signature(
    x,
    y=2.0,
) -> float:
    return x * y


def with_a_string(x):
    note = """
this line is less indented than the body
"""
    return x * len(note)


def with_a_bracket(x):
    total = (x
+ 1.0)
    return total * x


def column_zero_comment(x):
    y = x * 3.0
# between the statements of the body
    return y * x


class Holder:
    def method(self, x):
        return x * x

    def next_one(self):
        return 0


def last(x):
    return x + 1.0'''


@pytest.fixture
def layouts(tmp_path):
    path = tmp_path / "layouts_module.py"
    path.write_text(LAYOUTS)
    spec = importlib.util.spec_from_file_location("layouts_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "name",
    [
        "plain",
        "decorated",
        "long_signature",
        "with_a_string",
        "with_a_bracket",
        "column_zero_comment",
        "method",
        "last",
    ],
)
def test_a_function_is_read_whole_and_alone_whatever_its_layout(layouts, name):
    fn = getattr(layouts, name, None) or getattr(layouts.Holder, name)
    parsed = parse_function(fn)
    lines, first = inspect.getsourcelines(fn.__code__)  # the reference: Python's tokenizer
    assert gast.dump(parsed.tree) == gast.dump(gast.parse(textwrap.dedent("".join(lines))).body[0])
    loc = parsed.loc(parsed.tree)  # the place errors name: the `def` line, in the file
    assert parsed.first_lineno == first
    assert loc.line.strip().startswith(f"def {name}(")
    assert LAYOUTS.splitlines()[loc.lineno - 1].strip() == loc.line.strip()


def test_a_function_is_read_without_looking_through_the_loaded_modules(layouts, monkeypatch):
    # `inspect.findsource` asks `inspect.getmodule`, which looks through every module loaded for a file it has not
    # seen (tens of milliseconds with SciPy loaded): chadpy reads the lines by the code's own file name
    def no_search(*args, **kwargs):
        raise AssertionError("inspect.getmodule was called")

    monkeypatch.setattr(inspect, "getmodule", no_search)
    for name in ("plain", "decorated", "long_signature", "last"):
        assert parse_function(getattr(layouts, name)).tree.name == name


def test_a_walk_visits_no_load_or_store_context_nodes():
    # a third of a tree's nodes are the `ctx` of its names, attributes and subscripts, read as `node.ctx` only
    tree = gast.parse("a[i] = b.c + f(d)\ndel e")
    kinds = {type(n).__name__ for n in scope.walk(tree)}
    assert kinds.isdisjoint({"Load", "Store", "Del"}) and {"Subscript", "Attribute", "Call", "Delete"} <= kinds


def test_functions_read_by_their_layout_have_right_gradients(layouts):
    import chadpy as chad

    assert chad.grad(layouts.long_signature, argnums=(0, 1))(3.0, 2.0) == (2.0, 3.0)
    assert chad.grad(layouts.with_a_string)(2.0) == len("\nthis line is less indented than the body\n")
    assert chad.grad(layouts.with_a_bracket)(2.0) == 2.0 * 2.0 + 1.0
    assert chad.grad(layouts.column_zero_comment)(2.0) == 12.0
    assert chad.grad(layouts.last)(2.0) == 1.0


# ====================================================================== 12-13. arguments and kinds of rules


def matrix_one_norm(a):
    return np.linalg.norm(a, 1)


def vector_three_norm(x):
    return np.linalg.norm(x, 3)


def vector_norm_by_keyword(x):
    return np.linalg.norm(x, axis=0) + np.linalg.norm(x, None, 0, False)


def power_of_aranges(x):
    return np.sum(x ** np.arange(4))


def array_to_float_power(v, p):
    return np.sum(np.abs(v) ** p)


def sort_by_mergesort(x):
    return np.sum(np.sort(x, kind="mergesort") * np.arange(2.0))


@pytest.mark.parametrize(("fn", "x"), [(matrix_one_norm, np.eye(2) + 0.5), (vector_three_norm, np.array([1.0, -2.0]))])
def test_a_positional_argument_is_bound_as_numpy_binds_it(fn, x):
    """`np.linalg.norm(a, 1)` is `ord=1` (a matrix 1-norm), never `axis=1`."""
    assert_grad_matches_fd(fn, (x,))


def test_an_argument_chadpy_does_not_handle_is_an_error_not_another_parameter():
    with pytest.raises(chad.UnsupportedSyntax) as info:
        chad.grad(sort_by_mergesort)(np.array([1.0, -2.0]))
    assert "`kind`" in info.value.message
    assert_located(str(info.value), sort_by_mergesort, 'return np.sum(np.sort(x, kind="mergesort") * np.arange(2.0))')


def test_arguments_bound_by_the_real_signature():
    assert_grad_matches_fd(vector_norm_by_keyword, (np.array([1.0, -2.0, 0.5]),))


def test_power_with_a_float_base_and_an_array_exponent():
    assert_grad_matches_fd(power_of_aranges, (0.5,))
    assert chad.grad(power_of_aranges)(0.5) == pytest.approx(2.75)
    assert_grad_matches_fd(array_to_float_power, (np.array([0.5, -1.5]), 2.5), argnums=(0, 1))
