"""The generator's vocabulary: the weights of the constructs, the programs it returns, the typed environment
and the contexts it keeps (the generator itself is `_Gen` in `__init__`, one mixin per construct family).

Random programs in chadpy's supported language, for the differential tester (`differential.py`).

`generate(seed)` returns a `Program`: a module (helper functions, constants and `def f(...)`),
argument values for `f` and the `argnums` to differentiate. Programs are valid *by
construction*: the generator keeps a typed environment of the variables in scope (Python
floats, ints, 1-D and 2-D float arrays, int index arrays, lists of floats, dicts of floats
with str keys, tuples of floats, function values, records: objects of the module's classes)
with, for each, a bound on the magnitude
of the floats it holds, so that every expression is well-typed and every value stays
bounded (squashed by tanh/sin/atan when a bound grows, `log`/`sqrt` only of `1 + x*x`,
division only by `1 + x*x`, small loop trip counts, small arrays). `f` returns a finite
float.

Objects: a program may define classes (made on demand, each once: a `@dataclass`, a
`namedtuple`, a plain class whose `__init__` computes its attributes, with a method, a
property, a static method, a class method and `__call__`, and a subclass of it inheriting
and overriding methods), make records of them in `f` and its helpers, pass them to helpers
and get them back, take a namedtuple or dataclass argument (differentiated: `RecordArg`,
made when the module is loaded, `bind_args`) and read a module-level instance (data). Every
attribute of every record is bounded by `ATTR`, so a helper can read `p.a` and `p.b` of a
record of any class (they all have both). Whether a program uses objects is drawn from a
stream of its own, so programs without objects are the same as before they existed.

Code no derivative flows through (issue 37) is mixed into the active code: before each statement, from a
stream of its own (`Base.x_rng`, so that a program drawing none is the program made before they existed),
maybe one of the `x_*` statements: a `raise` in a branch no call takes, `assert`, a counter through
`global`, an evaluation log, `np.finfo(float).eps`, `del`, `import` in the function, a class statement used
as data, writes into a module-level object (`inactive`); arrays and lists unpacked into names, writes into
the elements of lists and dicts the function builds, into their elements' elements and a matrix's (`xs[i][j] = v`)
and into the attributes of its records (`writes`);
`try`/`except`/`else`/`finally` around active code that may raise part-way (`tries`).

Every construct has a weight in `WEIGHTS` (0 turns it off); `generate(seed, weights)`
takes overrides. Generation is deterministic in the seed.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from dataclasses import replace as _replace

import numpy as np

# Statement kinds (s_*), expression productions (e_*), array productions (a_*), list
# productions (l_*), loop kinds (loop_*), helper kinds (h_*) and parameter kinds (p_*).
WEIGHTS: dict[str, float] = {
    # statements
    "s_assign": 6.0,
    "s_reassign": 2.0,
    "s_augassign": 2.0,
    "s_ifexp": 1.0,
    "s_boolop": 0.7,
    "s_tuple": 1.0,
    "s_pair_call": 0.7,
    "s_if_join": 2.0,
    "s_if_reassign": 1.5,
    "s_if_return": 0.8,
    "s_loop": 3.5,
    "s_npscalar_loop": 0.6,
    "s_list": 2.5,
    "s_dict": 0.8,
    "s_dict_comp": 0.0,  # the fraction of s_dict that are dict comprehensions (unsupported: docs/language.md)
    "s_array": 2.5,
    "s_array_augassign": 0.5,
    "s_array_store": 1.0,
    "s_closure": 1.2,
    "s_hof": 1.0,
    "s_comp_name_reuse": 0.3,
    # statements only inside loops
    "s_carried": 5.0,
    "s_append": 3.0,
    "s_break_if": 2.0,
    "s_continue_if": 1.5,
    "s_return_in_loop": 0.4,
    # loop kinds
    "loop_range": 3.0,
    "loop_list": 2.0,
    "loop_array": 1.5,
    "loop_rows": 1.0,
    "loop_enumerate": 1.0,
    "loop_zip": 1.0,
    "loop_dict": 1.5,
    "loop_while": 1.0,
    # float expressions
    "e_var": 8.0,
    "e_const": 2.0,
    "e_module_const": 0.5,
    "e_module_data": 0.8,
    "module_data": 0.3,  # the share of programs with module-level data
    "partial": 0.15,  # the share of calls of a float helper made through a module-level partial
    "e_int": 0.6,
    "e_neg": 0.6,
    "e_binop": 4.0,
    "e_div": 1.0,
    "e_pow_int": 0.8,
    "e_pow_float": 0.6,
    "e_math": 3.0,
    "e_hypot": 0.4,
    "e_abs": 0.5,
    "e_special": 1.0,  # the rest of math's one-argument functions
    "e_math2": 0.6,  # math's functions of several arguments and of lists
    "e_maxmin": 0.8,
    "e_mod": 0.15,
    "e_ifexp": 0.4,
    "e_array_index": 1.2,
    "e_array_reduce": 1.5,
    "e_dot": 0.5,
    "e_norm": 0.3,
    "e_array_stat": 0.6,  # std var median ptp cumsum average, norms of other orders
    "e_list_index": 1.0,
    "e_list_reduce": 1.0,
    "e_genexp": 0.3,
    "e_reduce": 0.3,
    "linalg": 0.1,  # of the array reductions: through np.linalg / scipy.special (a stream of its own)
    "e_dict_get": 1.0,
    "e_dict_sum": 0.3,
    "e_tuple_index": 0.6,
    "e_helper_call": 1.2,
    "e_closure_call": 1.2,
    "e_hof_call": 0.6,
    # array expressions
    "a_var": 6.0,
    "a_literal": 1.0,
    "a_nested_literal": 0.7,  # np.array([[...], ...]) for 2-D shapes (a_literal is for 1-D)
    "a_constructor": 1.0,
    "a_linspace": 0.02,  # rejected by chadpy (not in docs/language.md's list), kept rare
    "a_unary": 2.0,
    "a_binop": 2.5,
    "a_scalar": 2.0,
    "a_broadcast": 1.5,
    "a_outer_broadcast": 0.6,
    "a_where": 0.4,
    "a_clip": 0.3,
    "a_maxmin": 0.4,
    "a_special": 1.0,  # the rest of NumPy's one-argument ufuncs
    "a_binary2": 0.6,  # NumPy's two-argument ufuncs beyond + - * /
    "a_derived": 2.0,
    "a_shape": 0.8,  # flip roll sort tile repeat broadcast_to cumsum swapaxes pad ...
    "a_int_index": 0.6,
    "a_pow_arange": 0.3,
    "a_helper": 0.4,
    # list expressions
    "l_var": 3.0,
    "l_literal": 2.0,
    "l_concat": 0.6,
    "l_copy": 0.4,
    "l_slice": 0.6,
    "l_comp": 2.0,
    "l_comp_filter": 1.0,
    "l_comp_range": 0.5,
    "l_comp_zip": 0.4,
    "l_comp_nested": 0.2,
    "l_sorted": 0.4,
    "l_sorted_key": 0.3,
    "l_map": 0.4,
    "l_dict_values": 0.3,
    "l_from_array": 0.3,
    # helpers (module-level functions), made on demand
    "h_float": 1.0,
    "h_pair": 1.0,
    "h_rec": 0.6,
    "h_integrate": 0.5,
    "h_apply": 0.5,
    "h_iterate": 0.4,
    "h_layer": 0.5,
    "h_sqnorm": 0.4,
    "h_total": 0.4,
    "h_model": 0.4,
    # closures made inside f
    "c_lambda": 2.0,
    "c_def": 1.5,
    "c_rec": 0.6,
    # function values passed to helpers, map, sorted: closures, module helpers (with a default), primitives
    "fv_closure": 3.0,
    "fv_helper": 1.0,
    "fv_primitive": 1.0,
    # objects (module-level classes made on demand, records of them); `objects` is the share of
    # programs using them (0 turns all of this off), the rest only count in those programs
    "objects": 0.3,
    "o_dataclass": 1.0,  # class kinds
    "o_namedtuple": 1.0,
    "o_plain": 1.5,
    "o_subclass": 0.7,
    "s_record": 3.0,  # ob = C(e1, e2) (or reassigned, same class)
    "s_record_helper": 0.7,  # ob = mk(e1, e2) or ob = step(ob, e): a helper returning a record
    "e_attr": 2.0,  # ob.a (a namedtuple: sometimes ob[0])
    "e_method": 2.0,  # ob.total(e), ob.sq(e) (static), ob.scale(e) (class method), inherited ones
    "e_prop": 1.0,  # ob.prop
    "e_obj_call": 1.2,  # ob(e): __call__
    "e_record_helper": 0.8,  # use(ob, e): a helper reading a record's attributes
    "e_outside_obj": 1.0,  # O0.a, O0.total(e), O0.prop: a module-level instance (data)
    "outside_obj": 0.4,  # the share of object programs with a module-level instance
    "outside_callable": 0.5,  # ... that may be of a class with __call__
    "loop_record": 0.15,  # the share of loops (in object programs) carrying a record
    "p_record": 1.0,  # f takes a namedtuple or dataclass (among p_*, in object programs)
    # parameters of f
    "p_float": 4.0,
    "p_array": 2.0,
    "p_matrix": 1.5,
    "p_list": 1.6,
    "p_dict": 1.0,
    "p_tuple": 0.6,
    "p_int": 0.8,
    "p_index": 0.5,
    # argnums: how often it is a bare int (when one parameter), and unsorted tuples
    "argnums_int": 0.5,
    "argnums_unsorted": 0.1,
    # issue 37, code no derivative flows through mixed into active code (`inactive`, `writes`, `tries`): before
    # each statement, with probability `extras`, one of the x_* statements, drawn from a stream of its own
    # (`Base.x_rng`), so that a program without any is the same as before they existed
    "extras": 0.07,
    "x_raise_guard": 1.0,  # if <never at these bounds>: raise ValueError(...)
    "x_assert": 1.0,  # assert <always>, "msg {}".format(k)
    "x_global": 0.7,  # CALLS += 1 (f only: `global CALLS` at its top)
    "x_log": 0.8,  # LOG.append(k), a module-level list, of a value no derivative flows into
    "x_eps": 0.7,  # eps = np.finfo(float).eps, used in arithmetic
    "x_del": 0.6,  # tmp = ...; s = ... tmp ...; del tmp
    "x_import": 0.6,  # import math as m2 (and others) inside the function, used at once
    "x_local_class": 0.6,  # a class statement in the function, instantiated, its attributes read as data
    "x_state": 0.7,  # STATE.calls += 1 on a module-level object of a class of the module
    "x_unpack": 1.2,  # a, b, c = theta (a 1-D array), r0, r1 = M (a matrix's rows), a, b = xs (a list)
    "x_list_store": 1.0,  # lst[i] = v, lst[i] += v on a list the statement builds (a fill loop too)
    "x_dict_store": 1.0,  # d["k"] = v, d["k"] *= v, del d["k"] on a dict the statement builds, read back
    "x_nested_store": 0.7,  # lst[i][j] = v, lst[i][j] += v, d["k"][j] = v, M[i][j] = v on new containers, read back
    "x_attr_store": 2.0,  # ob.a = v, ob.b *= v on a record the function made (object programs)
    "x_try": 3.0,  # try/except/else/finally (below)
    # try statements: what raises in the body on purpose ...
    "t_raise": 2.0,  # if <cond>: raise ArithmeticError(...) part-way (more may follow, in loops too)
    "t_zerodiv": 1.2,  # s = float(e) / (k - c), k an int that may be c (a loop index, an int argument)
    "t_library": 0.8,  # s = math.sqrt(e) (acos, log): ValueError where e is out of the domain
    "t_key": 0.3,  # a key the dict does not have: KeyError, always
    "t_none": 0.6,  # nothing (the handler is dead code), or try/finally without a handler
    # ... and its shape
    "t_else": 0.3,  # the share of tries with `else:`
    "t_finally": 0.3,  # ... with `finally:`
    "t_return": 0.25,  # ... whose body ends in `return`
    "t_two_handlers": 0.25,  # ... with two `except` clauses
    "t_jump": 0.6,  # ... in a loop, whose handler ends in `continue` (a quarter of them `break`)
    "s_raise_if": 1.5,  # in a try body: if <cond>: raise (a statement kind there, besides the one made)
}

FLOAT, INT, ARR, IARR, LIST, DICT, TUPLE, FN, STR = "float", "int", "arr", "iarr", "list", "dict", "tuple", "fn", "str"
REC = "rec"  # an object of one of the program's classes (`Ty.cls`)
DIFFERENTIABLE = (FLOAT, ARR, LIST, DICT, TUPLE, REC)

LIMIT = 6.0  # stored floats are squashed beyond this magnitude
ARG_BOUND = 1.5  # |argument floats| <= this
FN_IN = 3.0  # function values and float helpers accept |t| <= FN_IN ...
FN_OUT = 3.0  # ... and return |result| <= FN_OUT
MAX_DEPTH = 2  # nesting of compound statements
KEYS = ("a", "b", "c", "w", "bias")
SPECIAL = ("asinh", "acosh", "atanh", "asin", "acos", "exp2", "expm1", "log1p", "log2", "log10", "cbrt", "erf")
SPECIAL += ("erfc", "gamma", "lgamma", "ldexp", "degrees", "radians", "frexp", "modf")
NP_SPECIAL = ("arcsinh", "arccosh", "arctanh", "arcsin", "arccos", "arctan", "sinc", "fabs", "positive", "exp2")
NP_SPECIAL += ("expm1", "log1p", "log2", "log10", "cbrt", "reciprocal", "float_power", "deg2rad", "rad2deg")
NP_SPECIAL += ("conjugate", "frexp", "modf")
CONSTS = ("0.5", "-0.75", "1.25", "2.0", "0.1", "-1.5", "0.3", "0.9")
CTOR_IN = 2.0  # |constructor arguments| <= this ...
ATTR = 3.0  # ... so that every attribute of every record is <= this


@dataclass(frozen=True)
class Program:
    """A generated module with `def f`, its arguments and the argnums to differentiate."""

    seed: int
    source: str
    args: tuple
    argnums: int | tuple[int, ...]
    features: tuple[str, ...] = ()

    def replace(self, **changes) -> Program:
        return _replace(self, **changes)

    def __str__(self) -> str:
        lines = [self.source.rstrip(), "", f"# seed {self.seed}, argnums={self.argnums!r}"]
        lines += [f"# args[{i}] = {literal(a)}" for i, a in enumerate(self.args)]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class RecordArg:
    """An argument of f that is an object of a class the program defines (a namedtuple or a
    dataclass): made by `build` from the loaded module's namespace."""

    cls: str
    fields: tuple[tuple[str, float], ...]

    def build(self, namespace: dict) -> object:
        return namespace[self.cls](**dict(self.fields))

    def __repr__(self) -> str:
        return f"{self.cls}({', '.join(f'{k}={v!r}' for k, v in self.fields)})"


def bind_args(args: tuple, namespace: dict) -> tuple:
    """The arguments with each `RecordArg` made an object of the module's class (namespace: the
    loaded module's, `f.__globals__`)."""
    return tuple(a.build(namespace) if isinstance(a, RecordArg) else a for a in args)


def literal(value: object) -> str:
    """Python source that rebuilds an argument value (arrays as `np.array(...)`, a record as
    `C(a=..., b=...)`)."""
    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r})"
    if isinstance(value, RecordArg):
        return repr(value)
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


# ====================================================================== types and environments


@dataclass(frozen=True)
class Ty:
    """The kind of a variable and what the generator knows about its value."""

    kind: str
    bound: float = 1.0  # max |float| inside; INT/IARR: the largest value
    shape: tuple[int, ...] = ()  # ARR: the shape; IARR: (length,)
    length: int = 0  # LIST: guaranteed minimum length; TUPLE: the length
    maxlen: int = 0  # LIST: the maximum length
    keys: tuple[str, ...] = ()  # DICT: its keys; STR: the keys it may be
    lo: int = 0  # INT: the smallest value
    fresh: bool = True  # ARR: owns its memory (not a view of another array): `+=` is safe; REC: made by the
    # function (not an argument): its attributes may be assigned
    cls: str = ""  # REC: its class


@dataclass
class Env:
    """Variables in scope and their types; which may be reassigned here."""

    vars: dict[str, Ty] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # definition order (recent last)
    frozen: set[str] = field(default_factory=set)  # captured by a closure in scope
    assignable: set[str] = field(default_factory=set)  # reassignable here (not an outer loop's)
    locked: set[str] = field(default_factory=set)  # lists being appended by a loop: append only

    def copy(self) -> Env:
        return Env(dict(self.vars), list(self.order), set(self.frozen), set(self.assignable), set(self.locked))

    def add(self, name: str, ty: Ty) -> None:
        self.vars[name] = ty
        if name in self.order:
            self.order.remove(name)
        self.order.append(name)
        self.assignable.add(name)

    def names(self, kind: str, pred: Callable[[Ty], bool] | None = None) -> list[str]:
        return [
            n
            for n in self.order
            if self.vars[n].kind == kind and n not in self.locked and (pred is None or pred(self.vars[n]))
        ]

    def reassignable(self, kind: str, pred: Callable[[Ty], bool] | None = None) -> list[str]:
        return [n for n in self.names(kind, pred) if n in self.assignable and n not in self.frozen]


@dataclass
class Loop:
    """The innermost loop being generated."""

    trips: int  # the maximum trip count
    carried: dict[str, int]  # loop-carried variables -> updates still allowed this iteration
    appends: set[str]  # lists appended by this loop
    sure: set[str] = field(default_factory=set)  # lists appended on every iteration
    appended: set[str] = field(default_factory=set)  # lists appended somewhere in the body
    jumped: bool = False  # a break/continue was emitted at some point in the body
    updated: set[str] = field(default_factory=set)


EXCEPTIONS = ("ValueError", "ArithmeticError", "ZeroDivisionError", "RuntimeError", "KeyError")


def catches(handler: str, exc: str) -> bool:
    """Whether `except handler:` takes an exception of class exc (of EXCEPTIONS)."""
    return handler in (exc, "Exception") or (handler, exc) == ("ArithmeticError", "ZeroDivisionError")


@dataclass
class Try:
    """A try statement being generated: the exceptions its handlers take, and the environments where its
    body may raise one (what a handler may read: the variables every one of them has)."""

    caught: tuple[str, ...]  # of EXCEPTIONS
    raised: list[Env] = field(default_factory=list)


@dataclass
class Ctx:
    """Where a statement is generated."""

    indent: str
    depth: int  # enclosing compound statements
    loop: Loop | None = None
    loop_depth: int = -1  # depth of the innermost loop body
    in_def: bool = False  # inside a helper or nested def (no further closures/helpers)
    ret: str = "result"  # what a `return` returns: "result" (f), "bounded" (a float function), "pair", "record:C"
    tries: Try | None = None  # the innermost try whose body this is (where an exception raised here goes)

    def inner(self, **changes) -> Ctx:
        return _replace(self, indent=self.indent + "    ", depth=self.depth + 1, **changes)


E = tuple  # (code: str, bound: float[, fresh: bool]) for expressions


@dataclass
class Helper:
    """A module-level function: its name, kind (`h_*` weight) and result bound."""

    name: str
    kind: str
    bound: float = FN_OUT
    cls: str = ""  # h_record_make, h_record_step: the class of the record returned


@dataclass
class ClassInfo:
    """A module-level class: its kind (`o_*` weight) and what its objects offer. Every
    attribute is bounded by ATTR, methods take one float |t| <= FN_IN, and methods,
    properties and `__call__` return floats bounded by FN_OUT."""

    name: str
    kind: str
    params: tuple[str, ...]  # constructor parameters; those after `required` have defaults
    required: int
    fields: tuple[str, ...]  # its objects' attributes (namedtuple: in order)
    methods: tuple[str, ...] = ()  # ob.m(t): methods, static methods, class methods
    props: tuple[str, ...] = ()
    callable: bool = False  # ob(t)
    inherited: tuple[str, ...] = ()  # o_subclass: members its base defines (and `__call__`)
    frozen: bool = False  # its attributes cannot be assigned (a namedtuple, a frozen dataclass)


# ====================================================================== the generator


def normalize(source: str) -> str:
    """The source as `ast.unparse` prints it (redundant parentheses dropped), with two blank
    lines around top-level functions and classes."""
    tree = ast.parse(source)
    parts = []
    for k, node in enumerate(tree.body):
        if k:
            separate = isinstance(node, (ast.FunctionDef, ast.ClassDef)) or isinstance(
                tree.body[k - 1], (ast.FunctionDef, ast.ClassDef)
            )
            parts.append("\n\n\n" if separate else "\n")
        parts.append(ast.unparse(node))
    return "".join(parts) + "\n"
