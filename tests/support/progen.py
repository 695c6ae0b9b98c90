"""Random programs in chadpy's supported language, for the differential tester (`differential.py`).

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

Every construct has a weight in `WEIGHTS` (0 turns it off); `generate(seed, weights)`
takes overrides. Generation is deterministic in the seed.
"""

from __future__ import annotations

import ast
import itertools
import math
import random
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
    "s_dict_comp": 0.0,  # the fraction of s_dict that are dict comprehensions (unsupported: README)
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
    "a_linspace": 0.02,  # rejected by chadpy (not in the README's list), kept rare
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
    fresh: bool = True  # ARR: owns its memory (not a view of another array): `+=` is safe
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


@dataclass
class Ctx:
    """Where a statement is generated."""

    indent: str
    depth: int  # enclosing compound statements
    loop: Loop | None = None
    loop_depth: int = -1  # depth of the innermost loop body
    in_def: bool = False  # inside a helper or nested def (no further closures/helpers)
    ret: str = "result"  # what a `return` returns: "result" (f), "bounded" (a float function), "pair", "record:C"

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


# ====================================================================== the generator


class _Gen:
    def __init__(self, seed: int, weights: dict[str, float]):
        self.seed = seed
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.w = weights
        self.counters: dict[str, itertools.count] = {}
        self.helpers: list[Helper] = []
        self.helper_lines: list[list[str]] = []
        self.consts: list[tuple[str, float]] = []
        # module-level data (arrays, lists, tuples) the function reads; drawn from a separate stream so
        # that a program without any is the same as before they existed
        self.data: list[tuple[str, str, list[float]]] = []  # name, "array" | "list" | "tuple", values
        self.data_rng = random.Random(seed * 7919 + 13)
        self.partials: list[str] = []  # module-level `P0 = functools.partial(h0, s=...)`
        self.features: set[str] = set()
        self.lines: list[str] = []
        self.budget = 0
        self.reads: list[set[str]] = []  # stacks of names read, for closures' captured variables
        self.uses_functools = False
        self.in_def = False  # generating a helper's or nested def's body
        # objects: whether this program uses them is drawn from a stream of its own
        self.objects = random.Random(seed * 104729 + 7).random() < weights["objects"]
        # linear algebra and scipy.special in reductions: a stream of its own (programs without are unchanged)
        self.linalg_rng = random.Random(seed * 15485863 + 15)
        self.uses_scipy = False
        self.classes: list[ClassInfo] = []
        self.class_lines: list[list[str]] = []
        self.outside: list[tuple[str, ClassInfo, str]] = []  # module-level instances: name, class, arguments
        self.in_class = False  # generating a class's body (no records made there)
        self.imports: set[str] = set()  # "dataclass", "namedtuple"

    # ------------------------------------------------------------------ utilities

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self.counters.setdefault(prefix, itertools.count()))}"

    def choose(self, options: dict[str, float] | list[tuple[str, float]]):
        """A key drawn with probability proportional to its weight (the first key if all are 0)."""
        all_items = list(options.items()) if isinstance(options, dict) else list(options)
        items = [(k, w) for k, w in all_items if w > 0]
        if not items:
            return all_items[0][0]
        total = sum(w for _, w in items)
        r = self.rng.uniform(0, total)
        for k, w in items:
            r -= w
            if r <= 0:
                return k
        return items[-1][0]

    def pick(self, names: list[str]) -> str:
        """A variable, recent ones more likely; recorded as read (closures capture it)."""
        weights = [1.0 + i for i in range(len(names))]
        name = self.rng.choices(names, weights)[0]
        self.use(name)
        return name

    def use(self, name: str) -> None:
        for s in self.reads:
            s.add(name)

    def emit(self, ctx: Ctx, line: str) -> None:
        self.lines.append(ctx.indent + line)

    def feature(self, name: str) -> None:
        self.features.add(name)

    def const(self) -> E:
        c = self.rng.choice(CONSTS)
        return c, abs(float(c))

    # ------------------------------------------------------------------ squashing

    def squash(self, e: E, limit: float = 1.0) -> E:
        """e itself if its bound is within limit, else a squashed e."""
        code, b = e[0], e[1]
        if b <= limit:
            return e
        fn = self.rng.choice(["math.tanh", "math.sin", "math.atan", "math.tanh"])
        return f"{fn}({code})", (math.pi / 2 if fn == "math.atan" else 1.0)

    def asquash(self, e: E, limit: float = 1.0) -> E:
        code, b = e[0], e[1]
        if b <= limit:
            return e
        fn = self.rng.choice(["np.tanh", "np.sin", "np.tanh"])
        return f"{fn}({code})", 1.0, True

    # ------------------------------------------------------------------ float expressions

    def fexpr(self, env: Env, depth: int = 0) -> E:
        """A float expression (Python float or NumPy floating scalar) and its bound."""
        w = self.w
        deep = depth >= 2
        opts: dict[str, float] = {}
        floats = env.names(FLOAT)
        if floats:
            opts["e_var"] = w["e_var"]
        opts["e_const"] = w["e_const"] * (0.3 if floats else 1.0)
        if self.consts:
            opts["e_module_const"] = w["e_module_const"]
        if self.data:
            opts["e_module_data"] = w["e_module_data"]
        if env.names(INT):
            opts["e_int"] = w["e_int"]
        arrays = env.names(ARR)
        if arrays:
            opts["e_array_index"] = w["e_array_index"]
            opts["e_array_reduce"] = w["e_array_reduce"]
            opts["e_array_stat"] = w["e_array_stat"]
            if env.names(ARR, lambda t: len(t.shape) == 1):
                opts["e_dot"] = w["e_dot"]
                opts["e_norm"] = w["e_norm"]
        if env.names(LIST):
            opts["e_list_reduce"] = w["e_list_reduce"]
            if env.names(LIST, lambda t: t.length >= 1):
                opts["e_list_index"] = w["e_list_index"]
            if not deep:
                opts["e_reduce"] = w["e_reduce"]
                if env.names(LIST, lambda t: t.length >= 1):
                    opts["e_genexp"] = w["e_genexp"]
        if env.names(DICT):
            opts["e_dict_get"] = w["e_dict_get"]
            opts["e_dict_sum"] = w["e_dict_sum"]
        if env.names(TUPLE):
            opts["e_tuple_index"] = w["e_tuple_index"]
        if env.names(REC):
            opts["e_attr"] = w["e_attr"]
            if not deep:
                for k, offers in (("e_method", "methods"), ("e_prop", "props"), ("e_obj_call", "callable")):
                    if self.records(env, lambda c, offers=offers: bool(getattr(c, offers))):
                        opts[k] = w[k]
                if not self.in_def:
                    opts["e_record_helper"] = w["e_record_helper"]
        if self.outside and not deep and not self.in_class:
            opts["e_outside_obj"] = w["e_outside_obj"]
        if not deep:
            for k in ("e_neg", "e_binop", "e_div", "e_pow_int", "e_pow_float", "e_math", "e_hypot", "e_abs"):
                opts[k] = w[k]
            for k in ("e_special", "e_math2"):
                opts[k] = w[k]
            for k in ("e_maxmin", "e_mod", "e_ifexp"):
                opts[k] = w[k]
            if env.names(FN):
                opts["e_closure_call"] = w["e_closure_call"]
            if not self.in_def:
                opts["e_helper_call"] = w["e_helper_call"]
                opts["e_hof_call"] = w["e_hof_call"]
        kind = self.choose(opts)
        e = getattr(self, kind)(env, depth)
        assert len(e) >= 2
        return e[0], e[1]

    def e_var(self, env: Env, depth: int) -> E:
        name = self.pick(env.names(FLOAT))
        return name, env.vars[name].bound

    def e_const(self, env: Env, depth: int) -> E:
        return self.const()

    def e_module_const(self, env: Env, depth: int) -> E:
        name, value = self.rng.choice(self.consts)
        return name, abs(value)

    def e_module_data(self, env: Env, depth: int) -> E:
        """An element or a reduction of module-level data (issue 14): read, never differentiated."""
        name, kind, values = self.rng.choice(self.data)
        self.feature("module_data")
        bound = max(abs(v) for v in values)
        k = self.rng.randrange(len(values))
        if kind == "array":
            return self.rng.choice([(f"{name}[{k}]", bound), (f"np.sum({name})", bound * len(values))])
        if kind == "list":
            return self.rng.choice([(f"{name}[{k}]", bound), (f"sum({name})", bound * len(values))])
        return f"{name}[{k}]", bound

    def e_int(self, env: Env, depth: int) -> E:
        name = self.pick(env.names(INT))
        t = env.vars[name]
        c, bc = self.const()
        self.feature("int_arith")
        return f"({name} * {c})", max(abs(t.lo), abs(t.bound)) * bc

    def e_neg(self, env: Env, depth: int) -> E:
        a = self.fexpr(env, depth + 1)
        return f"(-{a[0]})", a[1]

    def e_binop(self, env: Env, depth: int) -> E:
        a, b = self.fexpr(env, depth + 1), self.fexpr(env, depth + 1)
        op = self.rng.choice("+-*")
        bound = a[1] * b[1] if op == "*" else a[1] + b[1]
        if bound > 100:
            a, b = self.squash(a), self.squash(b)
            bound = a[1] * b[1] if op == "*" else a[1] + b[1]
        return f"({a[0]} {op} {b[0]})", bound

    def e_div(self, env: Env, depth: int) -> E:
        a, b = self.fexpr(env, depth + 1), self.fexpr(env, depth + 1)
        return f"({a[0]} / (1.0 + {b[0]} * {b[0]}))", a[1]

    def e_pow_int(self, env: Env, depth: int) -> E:
        a = self.squash(self.fexpr(env, depth + 1), 3.0)
        k = self.rng.choice([2, 2, 3])
        return f"({a[0]} ** {k})", a[1] ** k

    def e_pow_float(self, env: Env, depth: int) -> E:
        a = self.squash(self.fexpr(env, depth + 1), 2.0)
        form = self.rng.randrange(3)
        if form == 0:
            c = self.rng.choice(["0.5", "1.5", "-0.5", "2.5"])
            return f"((1.0 + {a[0]} * {a[0]}) ** {c})", (1 + a[1] ** 2) ** max(float(c), 0.0)
        if form == 1:
            return f"(abs({a[0]}) ** 1.5)", a[1] ** 1.5
        b = self.squash(self.fexpr(env, depth + 1), 2.0)
        return f"((1.0 + {a[0]} * {a[0]}) ** {b[0]})", (1 + a[1] ** 2) ** b[1]

    def e_math(self, env: Env, depth: int) -> E:
        a = self.fexpr(env, depth + 1)
        fn = self.rng.choice(["sin", "cos", "tanh", "atan", "exp", "log", "sqrt", "sin", "tanh"])
        if fn == "exp":
            if a[1] > 3.0:
                a = self.squash(a)
            if self.rng.random() < 0.3:
                return f"math.exp(-{a[0]} * {a[0]})", 1.0
            return f"math.exp({a[0]})", math.exp(a[1])
        if fn == "log":
            a = self.squash(a, 30.0)
            return f"math.log(1.0 + {a[0]} * {a[0]})", math.log(1 + a[1] ** 2)
        if fn == "sqrt":
            a = self.squash(a, 30.0)
            return f"math.sqrt(1.0 + {a[0]} * {a[0]})", math.sqrt(1 + a[1] ** 2)
        return f"math.{fn}({a[0]})", (math.pi / 2 if fn == "atan" else 1.0)

    def e_hypot(self, env: Env, depth: int) -> E:
        a, b = self.fexpr(env, depth + 1), self.fexpr(env, depth + 1)
        return f"math.hypot({a[0]}, {b[0]})", math.hypot(a[1], b[1])

    def e_special(self, env: Env, depth: int) -> E:
        """math's other one-argument functions, each on a domain where it and its derivative are finite."""
        a = self.fexpr(env, depth + 1)
        fn = self.rng.choice(SPECIAL)
        self.feature("math_special")
        if fn in ("atanh", "asin", "acos"):
            a = self.squash(a)
            return f"math.{fn}(0.6 * {a[0]})", math.pi
        if fn in ("exp2", "expm1"):
            a = self.squash(a) if a[1] > 3.0 else a
            return f"math.{fn}({a[0]})", math.exp(a[1])
        if fn in ("log1p", "log2", "log10", "cbrt", "acosh"):
            a = self.squash(a, 30.0)
            shift = "1.5 + " if fn == "acosh" else "" if fn == "log1p" else "1.0 + "
            return f"math.{fn}({shift}{a[0]} * {a[0]})", 1.5 + a[1] ** 2
        if fn in ("gamma", "lgamma"):
            a = self.squash(a, 2.0)
            return f"math.{fn}(1.0 + {a[0]} * {a[0]})", max(1.0, math.gamma(1.0 + a[1] ** 2))
        if fn == "ldexp":
            k = self.rng.choice([-1, 1, 2])
            return f"math.ldexp({a[0]}, {k})", a[1] * 2.0**k
        if fn in ("degrees", "radians"):
            return f"(math.{fn}({a[0]}) * 0.01)", a[1] * 0.6
        if fn in ("frexp", "modf"):  # the first part (frexp's of a number >= 1: its derivative is at most 1/2)
            shift = "1.0 + " if fn == "frexp" else ""
            return f"math.{fn}({shift}{a[0]} * {a[0]})[0]", 1.0
        if fn == "asinh":
            return f"math.asinh({a[0]})", math.asinh(a[1])
        return f"math.{fn}({a[0]})", 2.0  # erf, erfc

    def e_math2(self, env: Env, depth: int) -> E:
        """math's functions of several arguments (`atan2` away from the origin) and of lists."""
        a, b = self.fexpr(env, depth + 1), self.fexpr(env, depth + 1)
        forms = ["atan2", "copysign", "fmod", "remainder", "hypot", "fsum", "prod", "dist", "nextafter", "divmod"]
        form = self.rng.choice(forms)
        self.feature("math_several")
        if form == "atan2":
            b = self.squash(b)
            return f"math.atan2({a[0]}, 2.0 + {b[0]})", math.pi
        if form == "copysign":
            return f"math.copysign({a[0]}, {b[0]})", a[1]
        if form == "nextafter":
            return f"math.nextafter({a[0]}, {b[0]})", a[1] + 1e-9
        if form == "divmod":
            return f"divmod({a[0]}, 1.5)[1]", 1.5
        if form in ("fmod", "remainder"):
            c = self.rng.choice(["1.5", "-0.75", "2.0"])
            return f"math.{form}({a[0]}, {c})", abs(float(c))
        c = self.fexpr(env, depth + 1)
        if form == "hypot":
            return f"math.hypot({a[0]}, {b[0]}, {c[0]})", a[1] + b[1] + c[1]
        if form == "fsum":
            return f"math.fsum([{a[0]}, {b[0]}, {c[0]}])", a[1] + b[1] + c[1]
        if form == "prod":
            a, b = self.squash(a, 3.0), self.squash(b, 3.0)
            return f"math.prod(({a[0]}, {b[0]}))", a[1] * b[1]
        return f"math.dist(({a[0]}, {b[0]}), [{c[0]}, 0.5])", a[1] + b[1] + c[1] + 0.5

    def e_abs(self, env: Env, depth: int) -> E:
        a = self.fexpr(env, depth + 1)
        return f"abs({a[0]})", a[1]

    def e_maxmin(self, env: Env, depth: int) -> E:
        parts = [self.fexpr(env, depth + 1) for _ in range(self.rng.choice([2, 2, 3]))]
        fn = self.rng.choice(["max", "min"])
        return f"{fn}({', '.join(p[0] for p in parts)})", max(p[1] for p in parts)

    def e_mod(self, env: Env, depth: int) -> E:
        a = self.fexpr(env, depth + 1)
        return f"({a[0]} % 1.5)", 1.5

    def e_ifexp(self, env: Env, depth: int) -> E:
        a, b = self.fexpr(env, depth + 1), self.fexpr(env, depth + 1)
        return f"({a[0]} if {self.cond(env)} else {b[0]})", max(a[1], b[1])

    def index(self, env: Env, n: int) -> str:
        """An int expression in range for a sequence of length >= n >= 1."""
        ints = env.names(INT, lambda t: t.lo >= 0 and t.bound < n)
        r = self.rng.random()
        if ints and r < 0.5:
            return self.pick(ints)
        if r < 0.6 and env.names(INT, lambda t: t.lo >= 0):
            return f"({self.pick(env.names(INT, lambda t: t.lo >= 0))} % {n})"
        return str(self.rng.randrange(-n, n))

    def e_array_index(self, env: Env, depth: int) -> E:
        name = self.pick(env.names(ARR))
        t = env.vars[name]
        self.feature("np_scalar")
        if len(t.shape) == 1:
            return f"{name}[{self.index(env, t.shape[0])}]", t.bound
        i, j = self.index(env, t.shape[0]), self.index(env, t.shape[1])
        return (f"{name}[{i}, {j}]" if self.rng.random() < 0.7 else f"{name}[{i}][{j}]"), t.bound

    def any_array(self, env: Env, depth: int) -> tuple[str, Ty]:
        """An existing array or a small array expression, with its type."""
        if depth < 1 and self.rng.random() < 0.35:
            shape = self.rng.choice([(3,), (2,), (3, 2)] + [env.vars[n].shape for n in env.names(ARR)])
            e = self.aexpr(env, shape, depth + 1)
            return e[0], Ty(ARR, e[1], shape)
        name = self.pick(env.names(ARR))
        return name, env.vars[name]

    def e_array_reduce(self, env: Env, depth: int) -> E:
        code, t = self.any_array(env, depth)
        size = int(np.prod(t.shape))
        self.feature("np_reduce")
        if self.linalg_rng.random() < self.w["linalg"]:
            return self.linalg_reduce(code, t, size)
        form = self.rng.choice(["sum", "mean", "max", "min", "prod", "sum_axis", "method", "sumsq"])
        if form == "prod":
            if t.bound > 1.5:
                code = f"np.tanh({code})"
                return f"np.prod({code})", 1.0
            return f"np.prod({code})", t.bound**size
        if form == "sum_axis" and len(t.shape) == 2:
            axis = self.rng.randrange(2)
            fn = self.rng.choice(["sum", "mean", "max", "min"])
            keep = self.rng.random() < 0.3
            k = self.rng.randrange(t.shape[1 - axis])
            idx = f"[0, {k}]" if keep and axis == 0 else f"[{k}, 0]" if keep else f"[{k}]"
            kd = ", keepdims=True" if keep else ""
            self.feature("np_axis")
            return f"np.{fn}({code}, axis={axis}{kd}){idx}", t.bound * (t.shape[axis] if fn == "sum" else 1)
        if form == "method":
            fn = self.rng.choice(["sum", "mean", "max", "min"])
            return f"{code}.{fn}()", t.bound * (size if fn == "sum" else 1)
        if form == "sumsq":
            return f"np.sum({code} ** 2)", t.bound**2 * size
        if form in ("sum", "sum_axis"):
            return f"np.sum({code})", t.bound * size
        return f"np.{form}({code})", t.bound

    def linalg_reduce(self, code: str, t: Ty, size: int) -> E:
        """A number from an array through `np.linalg` (of a well-conditioned matrix made of a square one:
        the identity plus entries below 1/(2n) in size) or `scipy.special`."""
        rng = self.linalg_rng
        if rng.random() < 0.6:  # a matrix: the array itself if square, else x x.T (x a column or a matrix)
            n = t.shape[-1]
            if len(t.shape) == 1:
                m, bound = f"np.outer({code}, {code})", t.bound**2
            elif t.shape[0] != t.shape[1]:
                m, bound = f"(({code}).T @ ({code}))", t.bound**2 * t.shape[0]
            else:
                m, bound = code, t.bound
            a = f"(np.eye({n}) + {m} * {0.5 / (n * max(bound, 1.0))!r})"
            self.feature("np_linalg")
            if rng.random() < 0.5:
                return f"np.linalg.det({a})", 1.5**n
            return f"np.sum(np.linalg.solve({a}, np.ones({n})))", 2.0 * n
        self.uses_scipy = True
        self.feature("scipy_special")
        if rng.random() < 0.5:
            return f"scipy.special.logsumexp({code})", t.bound + math.log(size)
        return f"np.sum(scipy.special.expit({code}))", float(size)

    def e_dot(self, env: Env, depth: int) -> E:
        name = self.pick(env.names(ARR, lambda t: len(t.shape) == 1))
        t = env.vars[name]
        other = self.aexpr(env, t.shape, depth + 1)
        form = self.rng.randrange(3)
        code = [f"np.dot({name}, {other[0]})", f"({name} @ {other[0]})", f"{name}.dot({other[0]})"][form]
        self.feature("np_dot")
        return code, t.bound * other[1] * t.shape[0]

    def e_array_stat(self, env: Env, depth: int) -> E:
        """A reduction beyond sum/mean/max/min: statistics, cumulative sums, norms of another order."""
        code, t = self.any_array(env, depth)
        size = int(np.prod(t.shape))
        self.feature("np_stat")
        form = self.rng.choice(["std", "var", "median", "ptp", "cumsum", "average", "norm", "method", "axis"])
        if form == "norm":
            order = self.rng.choice(["1", "np.inf", "3"] if len(t.shape) == 1 else ["'fro'", "1", "np.inf"])
            return f"np.linalg.norm({code}, {order})", t.bound * size
        if form == "cumsum":
            return f"np.cumsum({code})[{self.rng.randrange(size)}]", t.bound * size
        if form == "method":
            fn = self.rng.choice(["std", "var"])
            return f"{code}.{fn}()", t.bound**2 if fn == "var" else t.bound
        if form == "axis" and len(t.shape) == 2:
            axis = self.rng.randrange(2)
            fn = self.rng.choice(["std", "var", "median", "ptp"])
            k = self.rng.randrange(t.shape[1 - axis])
            bound = t.bound**2 if fn == "var" else 2 * t.bound
            if self.rng.random() < 0.3:
                idx = f"[0, {k}]" if axis == 0 else f"[{k}, 0]"
                return f"np.{fn}({code}, axis={axis}, keepdims=True){idx}", bound
            return f"np.{fn}({code}, axis={axis})[{k}]", bound
        if form in ("axis", "average"):
            return f"np.average({code})", t.bound
        return f"np.{form}({code})", t.bound**2 if form == "var" else 2 * t.bound

    def e_norm(self, env: Env, depth: int) -> E:
        code, t = self.any_array(env, depth)
        self.feature("np_norm")
        return f"np.linalg.norm({code})", t.bound * math.sqrt(int(np.prod(t.shape)))

    def e_list_index(self, env: Env, depth: int) -> E:
        name = self.pick(env.names(LIST, lambda t: t.length >= 1))
        t = env.vars[name]
        k = self.rng.randrange(-t.length, t.length)
        if t.length == t.maxlen and self.rng.random() < 0.3:
            return f"{name}[{self.index(env, t.length)}]", t.bound
        return f"{name}[{k}]", t.bound

    def e_list_reduce(self, env: Env, depth: int) -> E:
        name = self.pick(env.names(LIST))
        t = env.vars[name]
        forms = ["sum", "len"] + (["max", "min", "max_key"] if t.length >= 1 else [])
        form = self.rng.choice(forms)
        self.feature("list_reduce")
        if form == "sum":
            # sum([]) is the int 0: scale it so the result is a float either way
            return (
                (f"sum({name})", t.bound * t.maxlen) if t.length >= 1 else (f"(sum({name}) * 0.5)", t.bound * t.maxlen)
            )
        if form == "len":
            return f"(len({name}) * 0.25)", 0.25 * t.maxlen
        if form == "max_key":
            key = self.rng.choice(["abs", "lambda t: -t", "math.sin"])
            self.feature("key_fn")
            return f"{self.rng.choice(['max', 'min'])}({name}, key={key})", t.bound
        return f"{form}({name})", t.bound

    def e_genexp(self, env: Env, depth: int) -> E:
        name = self.pick(env.names(LIST, lambda t: t.length >= 1))
        t = env.vars[name]
        var = self.rng.choice(["t", "e", "u"])
        inner = env.copy()
        inner.add(var, Ty(FLOAT, t.bound))
        body = self.squash(self.fexpr(inner, depth + 1), 2.0)
        self.feature("genexp")
        return f"sum(({body[0]} for {var} in {name}))", body[1] * t.maxlen

    def e_reduce(self, env: Env, depth: int) -> E:
        name = self.pick(env.names(LIST))
        t = env.vars[name]
        self.uses_functools = True
        self.feature("functools_reduce")
        c = self.rng.choice(["0.5", "0.9", "-0.5"])
        if self.rng.random() < 0.5 or t.length < 1:
            return f"functools.reduce(lambda acc, t: acc * {c} + t, {name}, 0.0)", t.bound * t.maxlen
        return f"functools.reduce(lambda acc, t: acc * {c} + math.sin(t), {name})", t.bound + t.maxlen

    def e_dict_get(self, env: Env, depth: int) -> E:
        name = self.pick(env.names(DICT))
        t = env.vars[name]
        keys = env.names(STR, lambda k: set(k.keys) <= set(t.keys))
        if keys and self.rng.random() < 0.7:
            return f"{name}[{self.pick(keys)}]", t.bound
        return f"{name}[{self.rng.choice(t.keys)!r}]", t.bound

    def e_dict_sum(self, env: Env, depth: int) -> E:
        name = self.pick(env.names(DICT))
        t = env.vars[name]
        self.feature("dict_values")
        return f"sum({name}.values())", t.bound * len(t.keys)

    def e_tuple_index(self, env: Env, depth: int) -> E:
        name = self.pick(env.names(TUPLE))
        t = env.vars[name]
        return f"{name}[{self.rng.randrange(-t.length, t.length)}]", t.bound

    # -- objects

    def records(self, env: Env, pred: Callable[[ClassInfo], bool] | None = None) -> list[str]:
        """The records in scope whose class satisfies pred."""
        return [n for n in env.names(REC) if pred is None or pred(self.class_info(env.vars[n].cls))]

    def class_info(self, name: str) -> ClassInfo:
        return next(c for c in self.classes if c.name == name)

    def e_attr(self, env: Env, depth: int) -> E:
        """ob.a, or ob[k] of a namedtuple."""
        name = self.pick(env.names(REC))
        c = self.class_info(env.vars[name].cls)
        k = self.rng.randrange(len(c.fields))
        self.feature("obj_attr")
        if c.kind == "o_namedtuple" and self.rng.random() < 0.25:
            self.feature("namedtuple_index")
            return f"{name}[{k}]", ATTR
        return f"{name}.{c.fields[k]}", ATTR

    def member_call(self, obj: str, c: ClassInfo, env: Env, depth: int, forms: tuple[str, ...]) -> E:
        """A method call, a property read or a call of obj (one of forms its class offers)."""
        form = self.rng.choice([f for f in forms if getattr(c, f)])
        if form == "props":
            self.feature("obj_property")
            if "prop" in c.inherited:
                self.feature("obj_inherited_method")
            return f"{obj}.{self.rng.choice(c.props)}", FN_OUT
        a = self.arg(env, depth)
        if form == "callable":
            self.feature("obj_call")
            if "__call__" in c.inherited:
                self.feature("obj_inherited_method")
            return f"{obj}({a[0]})", FN_OUT
        m = self.rng.choice(c.methods)
        self.feature({"sq": "obj_staticmethod", "scale": "obj_classmethod"}.get(m, "obj_method"))
        if m in c.inherited:
            self.feature("obj_inherited_method")
        return f"{obj}.{m}({a[0]})", FN_OUT

    def e_method(self, env: Env, depth: int) -> E:
        name = self.pick(self.records(env, lambda c: bool(c.methods)))
        return self.member_call(name, self.class_info(env.vars[name].cls), env, depth, ("methods",))

    def e_prop(self, env: Env, depth: int) -> E:
        name = self.pick(self.records(env, lambda c: bool(c.props)))
        return self.member_call(name, self.class_info(env.vars[name].cls), env, depth, ("props",))

    def e_obj_call(self, env: Env, depth: int) -> E:
        name = self.pick(self.records(env, lambda c: c.callable))
        return self.member_call(name, self.class_info(env.vars[name].cls), env, depth, ("callable",))

    def e_record_helper(self, env: Env, depth: int) -> E:
        """use(ob, e): a helper reading the attributes a and b of a record of any class."""
        h = self.helper("h_record_use")
        name = self.pick(env.names(REC))
        a = self.arg(env, depth)
        self.feature("record_to_helper")
        return f"{h.name}({name}, {a[0]})", h.bound

    def e_outside_obj(self, env: Env, depth: int) -> E:
        """An attribute, a method, a property of a module-level instance: data, read when the
        derivative runs."""
        name, c, _ = self.rng.choice(self.outside)
        self.feature("outside_obj")
        if self.rng.random() < 0.4 or not (c.methods or c.props or c.callable):
            return f"{name}.{self.rng.choice(c.fields)}", ATTR
        return self.member_call(name, c, env, depth, ("methods", "props", "callable"))

    def arg(self, env: Env, depth: int, limit: float = FN_IN) -> E:
        return self.squash(self.fexpr(env, depth + 1), limit)

    def e_closure_call(self, env: Env, depth: int) -> E:
        g = self.pick(env.names(FN))
        a = self.arg(env, depth)
        self.feature("closure_call")
        return f"{g}({a[0]})", env.vars[g].bound

    def e_helper_call(self, env: Env, depth: int) -> E:
        kinds = {"h_float": self.w["h_float"], "h_pair": self.w["h_pair"], "h_rec": self.w["h_rec"]}
        if env.names(ARR):
            kinds["h_sqnorm"] = self.w["h_sqnorm"]
        if env.names(LIST, lambda t: t.length >= 1):
            kinds["h_total"] = self.w["h_total"]
        if env.names(DICT, lambda t: {"a", "b"} <= set(t.keys)):
            kinds["h_model"] = self.w["h_model"]
        h = self.helper(self.choose(kinds))
        self.feature("helper_call")
        if h.kind == "h_float":
            a, b = self.arg(env, depth), self.arg(env, depth)
            if self.data_rng.random() < self.w["partial"]:  # a module-level functools.partial of it
                name = f"P{len(self.partials)}"
                self.partials.append(f"{name} = functools.partial({h.name}, s={self.const()[0]})")
                self.uses_functools = True
                self.feature("partial")
                return f"{name}({a[0]})", h.bound
            form = self.rng.randrange(4)
            call = [
                f"{h.name}({a[0]})",
                f"{h.name}({a[0]}, {b[0]})",
                f"{h.name}({a[0]}, s={b[0]})",
                f"{h.name}(s={b[0]}, t={a[0]})",
            ][form]
            if form:
                self.feature("keyword_call")
            return call, h.bound
        if h.kind == "h_pair":
            a, b = self.arg(env, depth), self.arg(env, depth)
            return f"{h.name}({a[0]}, {b[0]})[{self.rng.choice([0, 1, -1])}]", h.bound
        if h.kind == "h_rec":
            a = self.arg(env, depth)
            m = self.rng.choice(["", ", 2", ", m=1", ", 4"])
            self.feature("recursion")
            return f"{h.name}({a[0]}{m})", h.bound
        if h.kind == "h_sqnorm":
            code, t = self.any_array(env, depth)
            return f"{h.name}({code})", t.bound**2 * int(np.prod(t.shape))
        if h.kind == "h_total":
            name = self.pick(env.names(LIST, lambda t: t.length >= 1))
            t = env.vars[name]
            return f"{h.name}({name})", t.bound * t.maxlen
        name = self.pick(env.names(DICT, lambda t: {"a", "b"} <= set(t.keys)))
        a = self.arg(env, depth)
        return f"{h.name}({name}, {a[0]})", env.vars[name].bound * (FN_IN + 1)

    def fn_value(self, env: Env) -> tuple[str, float]:
        """A function value float -> float: a closure in scope, a module helper or a primitive."""
        opts = {"prim": self.w["fv_primitive"], "helper": self.w["fv_helper"]}
        if env.names(FN):
            opts["closure"] = self.w["fv_closure"]
        if not any(v > 0 for v in opts.values()):
            opts["prim"] = 1.0
        kind = self.choose(opts)
        if kind == "closure":
            g = self.pick(env.names(FN))
            return g, env.vars[g].bound
        if kind == "helper":
            h = self.helper("h_float")
            self.feature("helper_value")
            return h.name, h.bound
        self.feature("primitive_value")
        return self.rng.choice(["math.sin", "math.tanh", "math.atan", "math.cos"]), math.pi / 2

    def e_hof_call(self, env: Env, depth: int) -> E:
        kind = self.choose(
            {"h_integrate": self.w["h_integrate"], "h_apply": self.w["h_apply"], "h_iterate": self.w["h_iterate"]}
        )
        h = self.helper(kind)
        g, bg = self.fn_value(env)
        a = self.arg(env, depth)
        self.feature("hof")
        if kind == "h_integrate":
            lo = self.rng.choice(["0.0", "-1.0"])
            return f"{h.name}({g}, {lo}, {a[0]}, {self.rng.choice([2, 3, 4])})", bg * (a[1] + 1.0)
        if kind == "h_apply":
            return f"{h.name}({g}, {a[0]})", bg
        return f"{h.name}({g}, {a[0]}{self.rng.choice(['', ', 2', ', n=4'])})", max(bg, a[1])

    # ------------------------------------------------------------------ conditions

    def cond(self, env: Env) -> str:
        opts = {"cmp": 4.0, "chain": 0.7, "not": 0.5, "and": 1.0, "or": 0.7}
        ints = env.names(INT)
        if ints:
            opts["int"] = 1.0
        if env.names(LIST):
            opts["len"] = 0.4
        if env.names(ARR):
            opts["arr"] = 0.8
        kind = self.choose(opts)

        def atom() -> str:
            return self.fexpr(env, 2)[0]

        if kind == "cmp":
            return f"{atom()} {self.rng.choice(['>', '<', '>=', '<='])} {atom()}"
        if kind == "chain":
            return f"-0.5 < {atom()} <= {atom()}"
        if kind == "not":
            return f"not {atom()} < {atom()}"
        if kind == "and":
            return f"{atom()} > {self.const()[0]} and {atom()} < {self.const()[0]}"
        if kind == "or":
            return f"{atom()} > {atom()} or {atom()} < {self.const()[0]}"
        if kind == "int":
            i = self.pick(ints)
            return self.rng.choice([f"{i} % 2 == 0", f"{i} > 1", f"{i} == 1", f"{i} < 2"])
        if kind == "len":
            xs = self.pick(env.names(LIST))
            return f"len({xs}) > {self.rng.choice([1, 2])}"
        a = self.pick(env.names(ARR))
        return self.rng.choice([f"np.sum({a}) > 0.0", f"np.max({a}) > 0.5", f"np.mean({a}) < {self.const()[0]}"])

    # ------------------------------------------------------------------ array expressions

    def aexpr(self, env: Env, shape: tuple[int, ...], depth: int = 0) -> E:
        """A float array expression of this shape: (code, bound, fresh)."""
        w = self.w
        opts: dict[str, float] = {k: w[k] for k in ("a_literal", "a_constructor", "a_linspace")}
        if len(shape) == 2:
            opts["a_literal"] = w["a_nested_literal"]
        if env.names(ARR, lambda t: t.shape == shape):
            opts["a_var"] = w["a_var"]
        if depth < 2:
            for k in (
                "a_unary",
                "a_binop",
                "a_scalar",
                "a_where",
                "a_clip",
                "a_maxmin",
                "a_derived",
                "a_shape",
                "a_special",
                "a_binary2",
            ):
                opts[k] = w[k]
            if len(shape) == 2 or (len(shape) == 1 and depth < 1):
                opts["a_broadcast"] = w["a_broadcast"]
            if shape in ((3, 2), (2, 3)):
                opts["a_outer_broadcast"] = w["a_outer_broadcast"]
            opts["a_int_index"] = w["a_int_index"]
            if len(shape) == 1 and env.names(FLOAT):
                opts["a_pow_arange"] = w["a_pow_arange"]
            if len(shape) == 1 and not self.in_def:
                opts["a_helper"] = w["a_helper"]
        kind = self.choose(opts)
        e = getattr(self, kind)(env, shape, depth)
        return e

    def a_var(self, env: Env, shape: tuple, depth: int) -> E:
        name = self.pick(env.names(ARR, lambda t: t.shape == shape))
        t = env.vars[name]
        return name, t.bound, False

    def a_literal(self, env: Env, shape: tuple, depth: int) -> E:
        self.feature("np_array_literal")
        if len(shape) == 1:
            parts = [self.fexpr(env, 2) for _ in range(shape[0])]
            return f"np.array([{', '.join(p[0] for p in parts)}])", max(p[1] for p in parts), True
        rows = []
        bound = 0.0
        for _ in range(shape[0]):
            parts = [self.fexpr(env, 2) if self.rng.random() < 0.6 else self.const() for _ in range(shape[1])]
            bound = max([bound] + [p[1] for p in parts])
            rows.append(f"[{', '.join(p[0] for p in parts)}]")
        return f"np.array([{', '.join(rows)}])", bound, True

    def a_constructor(self, env: Env, shape: tuple, depth: int) -> E:
        self.feature("np_constructor")
        dims = str(shape[0]) if len(shape) == 1 else f"({shape[0]}, {shape[1]})"
        c, bc = self.const()
        n = int(np.prod(shape))
        form = self.rng.randrange(4 if len(shape) == 1 else 3)
        if form == 0:
            return f"np.zeros({dims})", 0.0, True
        if form == 1:
            return f"(np.ones({dims}) * {c})", bc, True
        if form == 2:
            if len(shape) == 1:
                return f"(np.arange({n}) * {c})", (n - 1) * bc, True
            return f"(np.arange({n}).reshape({shape[0]}, {shape[1]}) * {c})", (n - 1) * bc, True
        return f"np.arange({float(shape[0])})", shape[0] - 1.0, True

    def a_linspace(self, env: Env, shape: tuple, depth: int) -> E:
        self.feature("np_linspace")
        c, bc = self.const()
        n = int(np.prod(shape))
        if len(shape) == 1:
            return f"np.linspace(-1.0, {c}, {n})", max(1.0, bc), True
        return f"np.linspace(0.0, 1.0, {n}).reshape({shape[0]}, {shape[1]})", 1.0, True

    def a_shape(self, env: Env, shape: tuple, depth: int) -> E:
        """An array of this shape made by a shape operation (or a sort, a cumulative sum) of another."""
        self.feature("np_shape_op")
        if len(shape) == 1:
            n = shape[0]
            forms = ["flip", "roll", "sort", "cumsum", "ravel"] + (["tile", "repeat"] if n % 2 == 0 else [])
            form = self.rng.choice(forms)
            if form in ("tile", "repeat"):
                a = self.aexpr(env, (n // 2,), depth + 1)
                return f"np.{form}({a[0]}, 2)", a[1], True
            if form == "ravel":
                a = self.aexpr(env, (1, n), depth + 1)
                return f"np.ravel({a[0]})", a[1], a[2]  # may be a view: as fresh as its operand
            a = self.aexpr(env, shape, depth + 1)
            code = {"flip": "np.flip({})", "roll": "np.roll({}, 1)", "sort": "np.sort({})", "cumsum": "np.cumsum({})"}
            fresh = a[2] or form != "flip"  # flip is a view
            return code[form].format(a[0]), a[1] * (n if form == "cumsum" else 1), fresh
        r, c = shape
        form = self.rng.choice(["flipud", "fliplr", "swapaxes", "broadcast", "sort", "cumsum", "roll", "vstack"])
        if form == "swapaxes":
            a = self.aexpr(env, (c, r), depth + 1)
            return f"np.swapaxes({a[0]}, 0, 1)", a[1], a[2]  # a view
        if form == "broadcast":
            a = self.aexpr(env, (c,), depth + 1)
            return f"np.broadcast_to({a[0]}, ({r}, {c}))", a[1], False  # a read-only view: never updated in place
        if form == "vstack":
            rows = [self.aexpr(env, (c,), depth + 1) for _ in range(r)]
            return f"np.vstack([{', '.join(a[0] for a in rows)}])", max(a[1] for a in rows), True
        a = self.aexpr(env, shape, depth + 1)
        code = {
            "flipud": "np.flipud({})",
            "fliplr": "np.fliplr({})",
            "sort": "np.sort({}, axis=0)",
            "cumsum": "np.cumsum({}, axis=1)",
            "roll": "np.roll({}, 1, axis=1)",
        }
        fresh = a[2] or form not in ("flipud", "fliplr")  # views
        return code[form].format(a[0]), a[1] * (c if form == "cumsum" else 1), fresh

    def a_unary(self, env: Env, shape: tuple, depth: int) -> E:
        a = self.aexpr(env, shape, depth + 1)
        fn = self.rng.choice(["sin", "cos", "tanh", "exp", "log", "sqrt", "abs", "square", "neg", "pow"])
        self.feature("np_unary")
        if fn == "exp":
            if a[1] > 3.0:
                a = self.asquash(a)
            return f"np.exp({a[0]})", math.exp(a[1]), True
        if fn == "log":
            a = self.asquash(a, 30.0)
            return f"np.log(1.0 + {a[0]} * {a[0]})", math.log(1 + a[1] ** 2), True
        if fn == "sqrt":
            a = self.asquash(a, 30.0)
            return f"np.sqrt(1.0 + {a[0]} ** 2)", math.sqrt(1 + a[1] ** 2), True
        if fn == "abs":
            return f"np.abs({a[0]})", a[1], True
        if fn in ("square", "pow"):
            a = self.asquash(a, 5.0)
            return (f"np.square({a[0]})" if fn == "square" else f"({a[0]} ** 2)"), a[1] ** 2, True
        if fn == "neg":
            return f"(-{a[0]})", a[1], True
        return f"np.{fn}({a[0]})", 1.0, True

    def a_binop(self, env: Env, shape: tuple, depth: int) -> E:
        a, b = self.aexpr(env, shape, depth + 1), self.aexpr(env, shape, depth + 1)
        op = self.rng.choice(["+", "-", "*", "/", "np.add", "np.multiply"])
        if op == "/":
            return f"({a[0]} / (1.0 + {b[0]} * {b[0]}))", a[1], True
        if op.startswith("np."):
            return f"{op}({a[0]}, {b[0]})", a[1] * b[1] if op == "np.multiply" else a[1] + b[1], True
        return f"({a[0]} {op} {b[0]})", a[1] * b[1] if op == "*" else a[1] + b[1], True

    def a_scalar(self, env: Env, shape: tuple, depth: int) -> E:
        a = self.aexpr(env, shape, depth + 1)
        s = self.fexpr(env, 2)
        form = self.rng.randrange(4)
        self.feature("np_scalar_broadcast")
        if form == 0:
            return f"({s[0]} * {a[0]})", s[1] * a[1], True
        if form == 1:
            return f"({a[0]} * {s[0]})", s[1] * a[1], True
        if form == 2:
            return f"({a[0]} + {s[0]})", s[1] + a[1], True
        return f"({s[0]} - {a[0]})", s[1] + a[1], True

    def a_broadcast(self, env: Env, shape: tuple, depth: int) -> E:
        """shape combined with a broadcast partner: (2,) or (1, 2) or (3, 1) with (3, 2)."""
        a = self.aexpr(env, shape, depth + 1)
        if len(shape) == 1:
            partner = (1, shape[0])  # (k,) + (1, k) -> (1, k): reshape back
            b = self.aexpr(env, partner, depth + 1)
            return f"({a[0]} + {b[0]}).reshape({shape[0]})", a[1] + b[1], True
        partners = [(shape[1],), (1, shape[1]), (shape[0], 1)]
        p = self.rng.choice(partners)
        b = self.aexpr(env, p, depth + 1)
        op = self.rng.choice(["+", "*", "-"])
        self.feature("np_broadcast")
        first, second = (a, b) if self.rng.random() < 0.5 else (b, a)
        return f"({first[0]} {op} {second[0]})", a[1] * b[1] if op == "*" else a[1] + b[1], True

    def a_outer_broadcast(self, env: Env, shape: tuple, depth: int) -> E:
        a = self.aexpr(env, (shape[0], 1), depth + 1)
        b = self.aexpr(env, (1, shape[1]), depth + 1)
        op = self.rng.choice(["+", "*"])
        self.feature("np_outer_broadcast")
        return f"({a[0]} {op} {b[0]})", a[1] * b[1] if op == "*" else a[1] + b[1], True

    def a_where(self, env: Env, shape: tuple, depth: int) -> E:
        a, b = self.aexpr(env, shape, depth + 1), self.aexpr(env, shape, depth + 1)
        self.feature("np_where")
        c = self.const()[0]
        return f"np.where({a[0]} > {c}, {a[0]}, {b[0]})", max(a[1], b[1]), True

    def a_clip(self, env: Env, shape: tuple, depth: int) -> E:
        a = self.aexpr(env, shape, depth + 1)
        self.feature("np_clip")
        return f"np.clip({a[0]}, -0.5, 0.75)", 0.75, True

    def a_maxmin(self, env: Env, shape: tuple, depth: int) -> E:
        a, b = self.aexpr(env, shape, depth + 1), self.aexpr(env, shape, depth + 1)
        fn = self.rng.choice(["maximum", "minimum"])
        self.feature("np_maximum")
        return f"np.{fn}({a[0]}, {b[0]})", max(a[1], b[1]), True

    def a_special(self, env: Env, shape: tuple, depth: int) -> E:
        """NumPy's other one-argument ufuncs, each on a domain where it and its derivative are finite."""
        a = self.aexpr(env, shape, depth + 1)
        fn = self.rng.choice(NP_SPECIAL)
        self.feature("np_special")
        if fn in ("arcsinh", "arctan", "sinc", "fabs", "positive", "conjugate"):
            return f"np.{fn}({a[0]})", max(a[1], 1.0), True
        if fn in ("arctanh", "arcsin", "arccos"):
            a = self.asquash(a)
            return f"np.{fn}(0.8 * {a[0]})", math.pi, True
        if fn in ("exp2", "expm1"):
            a = self.asquash(a) if a[1] > 3.0 else a
            return f"np.{fn}({a[0]})", math.exp(a[1]), True
        if fn in ("log1p", "log2", "log10", "cbrt", "arccosh", "reciprocal"):
            a = self.asquash(a, 30.0)
            shift = "1.5 + " if fn == "arccosh" else "" if fn == "log1p" else "1.0 + "
            return f"np.{fn}({shift}{a[0]} * {a[0]})", 1.5 + a[1] ** 2, True
        if fn in ("frexp", "modf"):  # the first part, as in e_special
            shift = "1.0 + " if fn == "frexp" else ""
            return f"np.{fn}({shift}{a[0]} * {a[0]})[0]", 1.0, True
        if fn == "float_power":
            a = self.asquash(a, 5.0)
            return f"np.float_power(1.0 + {a[0]} * {a[0]}, 1.5)", (1.0 + a[1] ** 2) ** 1.5, True
        return f"(np.{fn}({a[0]}) * 0.01)", a[1] * 0.6, True  # deg2rad, rad2deg, degrees, radians

    def a_binary2(self, env: Env, shape: tuple, depth: int) -> E:
        """NumPy's two-argument ufuncs (`arctan2` away from the origin)."""
        a, b = self.aexpr(env, shape, depth + 1), self.aexpr(env, shape, depth + 1)
        fns = ["hypot", "logaddexp", "logaddexp2", "arctan2", "fmax", "fmin", "copysign", "mod", "nextafter", "divmod"]
        fn = self.rng.choice(fns)
        self.feature("np_binary")
        if fn == "arctan2":
            b = self.asquash(b)
            return f"np.arctan2({a[0]}, 2.0 + {b[0]})", math.pi, True
        if fn == "mod":
            c = self.rng.choice(["1.5", "-0.75"])
            return f"np.{self.rng.choice(['mod', 'fmod', 'remainder'])}({a[0]}, {c})", abs(float(c)), True
        if fn == "copysign":
            return f"np.copysign({a[0]}, {b[0]})", a[1], True
        if fn == "nextafter":
            return f"np.nextafter({a[0]}, {b[0]})", a[1] + 1e-9, True
        if fn == "divmod":
            return f"np.divmod({a[0]}, 1.5)[1]", 1.5, True
        return f"np.{fn}({a[0]}, {b[0]})", a[1] + b[1] + 1.0, True

    def a_pow_arange(self, env: Env, shape: tuple, depth: int) -> E:
        x = self.squash(self.fexpr(env, 2), 1.5)
        self.feature("np_pow_arange")
        return f"({x[0]} ** np.arange({shape[0]}))", max(1.0, x[1] ** (shape[0] - 1)), True

    def a_int_index(self, env: Env, shape: tuple, depth: int) -> E:
        """a[idx] (1-D) or A[idx] (rows) with an int index array."""
        idxs = env.names(IARR, lambda t: t.shape[0] == shape[0])
        if idxs:
            idx = self.pick(idxs)
            top = env.vars[idx].bound
        else:  # an index array written here
            top = self.rng.choice([1, 2])
            idx = f"np.array([{', '.join(str(self.rng.randint(0, top)) for _ in range(shape[0]))}])"
        src_shape = (top + 1 + self.rng.randrange(2),) + shape[1:]
        if src_shape[0] not in (2, 3):
            src_shape = (3,) + shape[1:]
        a = self.aexpr(env, src_shape, depth + 1)
        self.feature("np_int_index")
        return f"{a[0]}[{idx}]", a[1], True

    def a_helper(self, env: Env, shape: tuple, depth: int) -> E:
        h = self.helper("h_layer")
        k = self.rng.choice([2, 3])
        W = self.aexpr(env, (shape[0], k), depth + 1)
        v = self.aexpr(env, (k,), depth + 1)
        self.feature("array_helper")
        return f"{h.name}({W[0]}, {v[0]})", 1.0, True

    def a_derived(self, env: Env, shape: tuple, depth: int) -> E:
        """Shape-changing operations that produce `shape` from other arrays."""
        forms: list[str] = []
        if len(shape) == 1:
            forms += ["matvec", "axis", "column", "row", "slice", "dot"]
        elif shape[1] == 1:
            forms += ["reshape_col", "keepdims"]
        elif shape[0] == 1:
            forms += ["reshape_row", "keepdims"]
        else:
            forms += ["outer", "transpose", "reshape2", "stack"]
        form = self.rng.choice(forms)
        self.feature("np_" + form)
        d = depth + 1
        if form in ("matvec", "dot"):
            k = self.rng.choice([2, 3])
            if self.rng.random() < 0.5:
                A = self.aexpr(env, (shape[0], k), d)
                v = self.aexpr(env, (k,), d)
                code = f"({A[0]} @ {v[0]})" if form == "matvec" else f"np.dot({A[0]}, {v[0]})"
            else:
                A = self.aexpr(env, (k, shape[0]), d)
                v = self.aexpr(env, (k,), d)
                code = f"({A[0]}.T @ {v[0]})" if form == "matvec" else f"np.dot({v[0]}, {A[0]})"
            return code, A[1] * v[1] * k, True
        if form == "axis":
            k = self.rng.choice([2, 3])
            axis = self.rng.randrange(2)
            src = (k, shape[0]) if axis == 0 else (shape[0], k)
            A = self.aexpr(env, src, d)
            fn = self.rng.choice(["sum", "mean", "max", "min"])
            return f"np.{fn}({A[0]}, axis={axis})", A[1] * (k if fn == "sum" else 1), True
        if form == "column":
            k = self.rng.choice([2, 3])
            A = self.aexpr(env, (shape[0], k), d)
            return f"{A[0]}[:, {self.rng.randrange(-k, k)}]", A[1], False
        if form == "row":
            k = self.rng.choice([2, 3])
            A = self.aexpr(env, (k, shape[0]), d)
            return f"{A[0]}[{self.index(env, k)}]", A[1], False
        if form == "slice":
            n = shape[0]
            v = self.aexpr(env, (n + 1,), d) if n + 1 <= 3 else None
            if v is None:
                v = self.aexpr(env, (n,), d)
                return f"{v[0]}[::-1]", v[1], False
            return f"{v[0]}[{self.rng.choice(['1:', ':' + str(n), '-' + str(n) + ':'])}]", v[1], False
        if form == "reshape_col":
            v = self.aexpr(env, (shape[0],), d)
            return f"{v[0]}.reshape({shape[0]}, 1)", v[1], False
        if form == "reshape_row":
            v = self.aexpr(env, (shape[1],), d)
            return f"{v[0]}.reshape(1, {shape[1]})", v[1], False
        if form == "keepdims":
            axis = 1 if shape[1] == 1 else 0
            k = self.rng.choice([2, 3])
            src = (shape[0], k) if axis == 1 else (k, shape[1])
            A = self.aexpr(env, src, d)
            fn = self.rng.choice(["sum", "mean", "max"])
            return f"np.{fn}({A[0]}, axis={axis}, keepdims=True)", A[1] * (k if fn == "sum" else 1), True
        if form == "outer":
            u, v = self.aexpr(env, (shape[0],), d), self.aexpr(env, (shape[1],), d)
            return f"np.outer({u[0]}, {v[0]})", u[1] * v[1], True
        if form == "transpose":
            A = self.aexpr(env, (shape[1], shape[0]), d)
            return (f"{A[0]}.T" if self.rng.random() < 0.7 else f"np.transpose({A[0]})"), A[1], False
        if form == "stack":
            parts = [self.aexpr(env, (shape[0],), d) for _ in range(shape[1])]
            return f"np.stack([{', '.join(p[0] for p in parts)}], axis=1)", max(p[1] for p in parts), True
        A = self.aexpr(env, (shape[1], shape[0]), d)
        return f"{A[0]}.reshape({shape[0]}, {shape[1]})", A[1], False

    # ------------------------------------------------------------------ list expressions

    def lexpr(self, env: Env, depth: int = 0) -> tuple[str, Ty]:
        """A list-of-floats expression and its type."""
        w = self.w
        lists = env.names(LIST)
        opts: dict[str, float] = {"l_literal": w["l_literal"]}
        if lists:
            for k in ("l_var", "l_concat", "l_copy", "l_comp", "l_comp_filter", "l_sorted", "l_sorted_key"):
                opts[k] = w[k]
            if env.names(LIST, lambda t: t.length == t.maxlen and t.length >= 2):
                opts["l_slice"] = w["l_slice"]
            if len(lists) >= 1 and depth == 0:
                opts["l_comp_zip"] = w["l_comp_zip"]
                opts["l_comp_nested"] = w["l_comp_nested"]
            if env.names(FN) or not self.in_def:
                opts["l_map"] = w["l_map"]
        opts["l_comp_range"] = w["l_comp_range"]
        if env.names(DICT):
            opts["l_dict_values"] = w["l_dict_values"]
        if env.names(ARR, lambda t: len(t.shape) == 1):
            opts["l_from_array"] = w["l_from_array"]
        kind = self.choose(opts)
        self.feature(kind)
        return getattr(self, kind)(env, depth)

    def some_list(self, env: Env) -> tuple[str, Ty]:
        name = self.pick(env.names(LIST))
        return name, env.vars[name]

    def l_var(self, env: Env, depth: int) -> tuple[str, Ty]:
        return self.some_list(env)

    def l_literal(self, env: Env, depth: int) -> tuple[str, Ty]:
        n = self.rng.choice([2, 3, 3, 4])
        parts = [self.fexpr(env, 2) for _ in range(n)]
        return f"[{', '.join(p[0] for p in parts)}]", Ty(LIST, max(p[1] for p in parts), length=n, maxlen=n)

    def l_concat(self, env: Env, depth: int) -> tuple[str, Ty]:
        a, ta = self.some_list(env)
        b, tb = self.lexpr(env, depth + 1) if depth < 1 else self.some_list(env)
        return f"({a} + {b})", Ty(
            LIST, max(ta.bound, tb.bound), length=ta.length + tb.length, maxlen=ta.maxlen + tb.maxlen
        )

    def l_copy(self, env: Env, depth: int) -> tuple[str, Ty]:
        a, ta = self.some_list(env)
        return f"list({a})", ta

    def l_slice(self, env: Env, depth: int) -> tuple[str, Ty]:
        name = self.pick(env.names(LIST, lambda t: t.length == t.maxlen and t.length >= 2))
        t = env.vars[name]
        n = t.length
        form = self.rng.randrange(4)
        if form == 0:
            return f"{name}[1:]", _replace(t, length=n - 1, maxlen=n - 1)
        if form == 1:
            return f"{name}[:2]", _replace(t, length=2, maxlen=2)
        if form == 2:
            return f"{name}[-2:]", _replace(t, length=2, maxlen=2)
        return f"{name}[::-1]", t

    def comp_body(self, env: Env, var: str, ty: Ty, depth: int) -> E:
        inner = env.copy()
        inner.add(var, ty)
        return self.squash(self.fexpr(inner, max(depth, 1)), LIMIT)

    def l_comp(self, env: Env, depth: int) -> tuple[str, Ty]:
        xs, t = self.some_list(env)
        var = self.rng.choice(["t", "e", "u"])
        body = self.comp_body(env, var, Ty(FLOAT, t.bound), depth)
        return f"[{body[0]} for {var} in {xs}]", Ty(LIST, body[1], length=t.length, maxlen=t.maxlen)

    def l_comp_filter(self, env: Env, depth: int) -> tuple[str, Ty]:
        xs, t = self.some_list(env)
        var = self.rng.choice(["t", "e", "u"])
        body = self.comp_body(env, var, Ty(FLOAT, t.bound), depth)
        inner = env.copy()
        inner.add(var, Ty(FLOAT, t.bound))
        test = self.rng.choice(
            [f"{var} > {self.const()[0]}", f"{var} < {self.fexpr(inner, 2)[0]}", f"abs({var}) > 0.2"]
        )
        return f"[{body[0]} for {var} in {xs} if {test}]", Ty(LIST, body[1], length=0, maxlen=t.maxlen)

    def l_comp_range(self, env: Env, depth: int) -> tuple[str, Ty]:
        n = self.rng.choice([2, 3, 4])
        var = self.rng.choice(["i", "j", "k"])
        body = self.comp_body(env, var, Ty(INT, n - 1, lo=0), depth)
        return f"[{body[0]} for {var} in range({n})]", Ty(LIST, body[1], length=n, maxlen=n)

    def two_lists(self, env: Env) -> tuple[str, Ty, str, Ty, E]:
        """Two lists in scope and a bounded body over their elements `t` and `u`."""
        xs, tx = self.some_list(env)
        ys, ty_ = self.some_list(env)
        inner = env.copy()
        inner.add("t", Ty(FLOAT, tx.bound))
        inner.add("u", Ty(FLOAT, ty_.bound))
        return xs, tx, ys, ty_, self.squash(self.fexpr(inner, 1), LIMIT)

    def l_comp_zip(self, env: Env, depth: int) -> tuple[str, Ty]:
        xs, tx, ys, ty_, body = self.two_lists(env)
        n, m = min(tx.length, ty_.length), min(tx.maxlen, ty_.maxlen)
        if self.rng.random() < 0.5:
            return f"[{body[0]} for t, u in zip({xs}, {ys})]", Ty(LIST, body[1], length=n, maxlen=m)
        inner = env.copy()
        inner.add("t", Ty(FLOAT, tx.bound))
        inner.add("i", Ty(INT, max(tx.maxlen - 1, 0), lo=0))
        body = self.squash(self.fexpr(inner, 1), LIMIT)
        return f"[{body[0]} for i, t in enumerate({xs})]", Ty(LIST, body[1], length=tx.length, maxlen=tx.maxlen)

    def l_comp_nested(self, env: Env, depth: int) -> tuple[str, Ty]:
        xs, tx, ys, ty_, body = self.two_lists(env)
        return f"[{body[0]} for t in {xs} for u in {ys}]", Ty(
            LIST, body[1], length=tx.length * ty_.length, maxlen=tx.maxlen * ty_.maxlen
        )

    def l_sorted(self, env: Env, depth: int) -> tuple[str, Ty]:
        xs, t = self.some_list(env)
        rev = self.rng.choice(["", ", reverse=True"])
        return f"sorted({xs}{rev})", t

    def l_sorted_key(self, env: Env, depth: int) -> tuple[str, Ty]:
        xs, t = self.some_list(env)
        key = self.rng.choice(["abs", "lambda t: -t", "math.sin"])
        if env.names(FN) and self.rng.random() < 0.5:
            key = self.pick(env.names(FN))
        self.feature("key_fn")
        return f"sorted({xs}, key={key})", t

    def l_map(self, env: Env, depth: int) -> tuple[str, Ty]:
        xs, t = self.some_list(env)
        if t.bound > FN_IN:
            g, bg = "math.tanh", 1.0
        else:
            g, bg = self.fn_value(env)
        self.feature("map")
        return f"list(map({g}, {xs}))", Ty(LIST, bg, length=t.length, maxlen=t.maxlen)

    def l_dict_values(self, env: Env, depth: int) -> tuple[str, Ty]:
        name = self.pick(env.names(DICT))
        t = env.vars[name]
        n = len(t.keys)
        if self.rng.random() < 0.5:
            return f"list({name}.values())", Ty(LIST, t.bound, length=n, maxlen=n)
        return f"[{name}[k] * 0.5 for k in sorted({name})]", Ty(LIST, t.bound * 0.5, length=n, maxlen=n)

    def l_from_array(self, env: Env, depth: int) -> tuple[str, Ty]:
        name = self.pick(env.names(ARR, lambda t: len(t.shape) == 1))
        t = env.vars[name]
        n = t.shape[0]
        self.feature("np_scalar")
        return f"[t * 0.5 for t in {name}]", Ty(LIST, t.bound * 0.5, length=n, maxlen=n)

    # ------------------------------------------------------------------ helpers (module-level functions)

    def helper(self, kind: str) -> Helper:
        """A module-level helper of this kind: an existing one or a new one."""
        existing = [h for h in self.helpers if h.kind == kind]
        if existing and self.rng.random() < 0.7:
            return self.rng.choice(existing)
        prefixes = {"h_rec": "rec", "h_integrate": "integrate", "h_apply": "apply", "h_iterate": "iterate"}
        prefixes |= {"h_record_use": "use", "h_record_make": "mk", "h_record_step": "step"}
        name = self.fresh(prefixes.get(kind, "h"))
        saved = (self.lines, self.budget, self.reads, self.in_def)
        self.lines, self.reads, self.in_def = [], [], True
        ctx = Ctx(indent="    ", depth=0, in_def=True, ret="pair" if kind == "h_pair" else "bounded")
        h = Helper(name, kind)
        c = lambda: self.const()[0]  # noqa: E731
        if kind in ("h_float", "h_pair"):
            params = "(t, s=0.5)" if kind == "h_float" else "(t, s)"
            self.emit(Ctx("", 0), f"def {name}{params}:")
            env = Env()
            env.add("t", Ty(FLOAT, FN_IN))
            env.add("s", Ty(FLOAT, FN_IN))
            self.budget = self.rng.randint(1, 4)
            self.block(env, ctx, self.budget)
            if kind == "h_float":
                r = self.squash(self.fexpr(env, 0), FN_OUT)
                self.emit(ctx, f"return {r[0]}")
                h.bound = r[1]
            else:
                a, b = self.squash(self.fexpr(env), FN_OUT), self.squash(self.fexpr(env), FN_OUT)
                self.emit(ctx, f"return ({a[0]}, {b[0]})")
                h.bound = max(a[1], b[1])
        elif kind == "h_rec":
            self.emit(Ctx("", 0), f"def {name}(t, m=3):")
            if self.rng.random() < 0.5:
                self.emit(ctx, f"return t if m <= 0 else {name}(math.sin(t) * 0.9 + {c()}, m - 1)")
            else:
                self.emit(ctx, "if m <= 0:")
                self.emit(ctx.inner(), "return t")
                self.emit(ctx, f"return {name}(math.tanh(t * {c()}) + t * 0.5, m - 1)")
            h.bound = FN_OUT
            self.feature("recursion")
        elif kind == "h_integrate":
            self.emit(Ctx("", 0), f"def {name}(g, a, b, n):")
            self.emit(ctx, "h = (b - a) / n")
            self.emit(ctx, "s = 0.0")
            self.emit(ctx, "for k in range(n):")
            self.emit(ctx.inner(), "s = s + g(a + (k + 0.5) * h) * h")
            self.emit(ctx, "return s")
        elif kind == "h_apply":
            self.emit(Ctx("", 0), f"def {name}(g, t):")
            self.emit(ctx, "return g(g(t))" if self.rng.random() < 0.6 else "return g(t) * 0.5 + g(-t)")
        elif kind == "h_iterate":
            self.emit(Ctx("", 0), f"def {name}(g, t, n=3):")
            self.emit(ctx, "for _ in range(n):")
            self.emit(ctx.inner(), "t = g(t)")
            self.emit(ctx, "return t")
        elif kind == "h_layer":
            self.emit(Ctx("", 0), f"def {name}(W, v):")
            self.emit(ctx, self.rng.choice(["return np.tanh(W @ v)", "return np.sin(np.dot(W, v)) * 0.5"]))
        elif kind == "h_sqnorm":
            self.emit(Ctx("", 0), f"def {name}(v):")
            self.emit(ctx, self.rng.choice(["return np.sum(v * v)", "return np.sum(v ** 2) * 0.5"]))
        elif kind == "h_total":
            self.emit(Ctx("", 0), f"def {name}(xs, w=0.5):")
            if self.rng.random() < 0.5:
                self.emit(ctx, "s = 0.0")
                self.emit(ctx, "for t in xs:")
                self.emit(ctx.inner(), "s += t * w")
                self.emit(ctx, "return s")
            else:
                self.emit(ctx, "return sum([t * w for t in xs])")
        elif kind == "h_model":
            self.emit(Ctx("", 0), f"def {name}(p, t):")
            self.emit(ctx, "return p['a'] * t + p['b']")
        elif kind in ("h_record_use", "h_record_make", "h_record_step"):
            self.record_helper(h, ctx)
        else:
            raise ValueError(kind)
        self.helper_lines.append(self.lines)
        self.helpers.append(h)
        self.lines, self.budget, self.reads, self.in_def = saved
        self.feature(kind)
        return h

    # ------------------------------------------------------------------ classes (module-level, made on demand)

    def some_class(
        self, kinds: tuple[str, ...] = ("o_dataclass", "o_namedtuple", "o_plain", "o_subclass")
    ) -> ClassInfo:
        """A class of one of these kinds: an existing one or a new one."""
        existing = [c for c in self.classes if c.kind in kinds]
        if existing and self.rng.random() < 0.7:
            return self.rng.choice(existing)
        kind = self.choose({k: self.w[k] for k in kinds})
        saved = (self.lines, self.budget, self.reads, self.in_def, self.in_class)
        self.lines, self.reads, self.in_def, self.in_class = [], [], True, True
        name = self.fresh({"o_dataclass": "Rec", "o_namedtuple": "Pt", "o_plain": "Box", "o_subclass": "Sub"}[kind])
        c = getattr(self, kind)(name)
        self.class_lines.append(self.lines)
        self.classes.append(c)
        self.lines, self.budget, self.reads, self.in_def, self.in_class = saved
        self.feature(kind)
        return c

    def member_env(self, attrs: tuple[str, ...], param: str | None = "t") -> Env:
        """The variables of a method's body: its object's attributes (read-only) and its parameter."""
        env = Env()
        for a in attrs:
            env.add(a, Ty(FLOAT, ATTR))
        env.assignable = set()
        if param:
            env.add(param, Ty(FLOAT, FN_IN))
        return env

    def member(self, ctx: Ctx, env: Env, statements: bool = True, extra: E | None = None) -> None:
        """`return e` (maybe after a few statements): a float bounded by FN_OUT over env (plus extra)."""
        if statements and self.rng.random() < 0.3:
            self.budget = self.rng.randint(1, 2)
            self.block(env, ctx, self.budget)
        e = self.fexpr(env, 0)
        if extra is not None:
            e = (f"{e[0]} + {extra[0]}", e[1] + extra[1])
        self.emit(ctx, f"return {self.squash(e, FN_OUT)[0]}")

    def method(self, ctx: Ctx, header: str, attrs: tuple[str, ...], extra: E | None = None) -> None:
        """`def name(self, t):` computing from the attributes and t."""
        self.emit(ctx, header)
        self.member(self.body_ctx(), self.member_env(attrs), extra=extra)

    def body_ctx(self) -> Ctx:
        """Where a method's statements go (compound statements allowed, as in a helper)."""
        return Ctx("        ", 0, in_def=True, ret="bounded")

    def o_dataclass(self, name: str) -> ClassInfo:
        """@dataclass with float fields (sometimes frozen, sometimes a default), maybe a method."""
        self.imports.add("dataclass")
        top, body = Ctx("", 0), Ctx("    ", 1)
        frozen = self.rng.random() < 0.2
        self.emit(top, "@dataclass(frozen=True)" if frozen else "@dataclass")
        self.emit(top, f"class {name}:")
        fields = ("a", "b", "c") if self.rng.random() < 0.4 else ("a", "b")
        self.emit(body, "a: float")
        self.emit(body, "b: float")
        if len(fields) == 3:
            self.emit(body, f"c: float = {self.const()[0]}")
            self.feature("dataclass_default")
        if frozen:
            self.feature("dataclass_frozen")
        methods: tuple[str, ...] = ()
        if self.rng.random() < 0.5:
            self.method(body, "def scaled(self, t):", tuple(f"self.{f}" for f in fields))
            methods = ("scaled",)
        return ClassInfo(name, "o_dataclass", fields, 2, fields, methods)

    def o_namedtuple(self, name: str) -> ClassInfo:
        """Pt = namedtuple('Pt', ...), sometimes with a default."""
        self.imports.add("namedtuple")
        if self.rng.random() < 0.3:
            self.emit(Ctx("", 0), f"{name} = namedtuple({name!r}, 'a b c', defaults=({self.const()[0]},))")
            self.feature("namedtuple_default")
            return ClassInfo(name, "o_namedtuple", ("a", "b", "c"), 2, ("a", "b", "c"))
        self.emit(Ctx("", 0), f"{name} = namedtuple({name!r}, ['a', 'b'])")
        return ClassInfo(name, "o_namedtuple", ("a", "b"), 2, ("a", "b"))

    def o_plain(self, name: str) -> ClassInfo:
        """A class whose `__init__(self, a, b)` computes the attributes a, b, c (sometimes in an
        `if`, sometimes `self.a += ...`), with a method `total` (calling the static method `sq`),
        a property `prop`, sometimes a class method `scale` (of a class attribute) and `__call__`."""
        top, body = Ctx("", 0), Ctx("    ", 1)
        init = Ctx("        ", 2, in_def=True)
        self.emit(top, f"class {name}:")
        K = self.rng.random() < 0.3
        if K:
            self.emit(body, f"K = {self.const()[0]}")
        self.emit(body, "def __init__(self, a, b):")
        env = Env()
        env.add("a", Ty(FLOAT, CTOR_IN))
        env.add("b", Ty(FLOAT, CTOR_IN))
        env.assignable = set()
        aug = self.rng.random() < 0.4
        limit = ATTR - 1.0 if aug else ATTR
        a = ("a", CTOR_IN) if self.rng.random() < 0.5 else self.squash(self.fexpr(env, 1), limit)
        self.emit(init, f"self.a = {a[0]}")
        env.add("self.a", Ty(FLOAT, ATTR))
        if self.rng.random() < 0.4:
            self.emit(init, f"if {self.cond(env)}:")
            self.emit(init.inner(), f"self.c = {self.squash(self.fexpr(env, 1), ATTR)[0]}")
            self.emit(init, "else:")
            self.emit(init.inner(), f"self.c = {self.squash(self.fexpr(env, 1), ATTR)[0]}")
            self.feature("init_if")
        else:
            self.emit(init, f"self.c = {self.squash(self.fexpr(env, 1), ATTR)[0]}")
        b = self.rng.choice([("b", CTOR_IN), ("math.tanh(b)", 1.0), self.squash(self.fexpr(env, 1), ATTR)])
        self.emit(init, f"self.b = {b[0]}")
        if aug:
            self.emit(init, f"self.a {self.rng.choice(['+=', '-='])} {self.squash(self.fexpr(env, 1), 1.0)[0]}")
            self.feature("init_augassign")
        attrs = ("self.a", "self.b", "self.c")
        sq = self.squash(self.fexpr(self.member_env(attrs), 2), FN_IN)
        self.method(body, "def total(self, t):", attrs, extra=(f"self.sq({sq[0]})", FN_OUT))
        self.emit(body, "@property")
        self.emit(body, "def prop(self):")
        self.member(self.body_ctx(), self.member_env(attrs, None), statements=False)
        self.emit(body, "@staticmethod")
        self.emit(body, "def sq(t):")
        self.member(self.body_ctx(), self.member_env(()))
        methods = ("total", "sq")
        if K:
            self.emit(body, "@classmethod")
            self.emit(body, "def scale(cls, t):")
            self.emit(Ctx("        ", 2), "return cls.K * math.tanh(t)")
            methods += ("scale",)
        call = self.rng.random() < 0.6
        if call:
            x = self.squash(self.fexpr(self.member_env(attrs), 1), FN_IN)
            self.method(body, "def __call__(self, t):", attrs + ("self.prop",), extra=(f"self.total({x[0]})", FN_OUT))
        return ClassInfo(name, "o_plain", ("a", "b"), 2, ("a", "b", "c"), methods, ("prop",), call)

    def o_subclass(self, name: str) -> ClassInfo:
        """A subclass of a plain class: inherits `__init__`, `sq`, `prop`, `__call__`, and either
        overrides `total` (which the inherited `__call__` then calls) or adds `twice`, calling the
        inherited `total`."""
        base = self.some_class(("o_plain",))
        body = Ctx("    ", 1)
        self.emit(Ctx("", 0), f"class {name}({base.name}):")
        attrs = ("self.a", "self.b", "self.c")
        inherited = tuple(m for m in base.methods if m != "total") + ("prop", "__call__")
        if self.rng.random() < 0.5:
            self.method(body, "def total(self, t):", attrs)
            methods = base.methods
            self.feature("obj_override")
        else:
            self.method(body, "def twice(self, t):", attrs, extra=("self.total(t) * 0.5", FN_OUT * 0.5))
            methods = base.methods + ("twice",)
            inherited += ("total",)
        return ClassInfo(name, "o_subclass", base.params, 2, base.fields, methods, base.props, base.callable, inherited)

    def construct(self, env: Env, c: ClassInfo) -> str:
        """C(e1, e2) (a dataclass: sometimes by keyword; a default: sometimes given)."""
        n = len(c.params) if len(c.params) > c.required and self.rng.random() < 0.4 else c.required
        args = [self.squash(self.fexpr(env, 1), CTOR_IN)[0] for _ in range(n)]
        if c.kind in ("o_dataclass", "o_namedtuple") and self.rng.random() < 0.3:
            order = list(range(n))
            self.rng.shuffle(order)
            self.feature("obj_keyword_construct")
            return f"{c.name}({', '.join(f'{c.params[k]}={args[k]}' for k in order)})"
        return f"{c.name}({', '.join(args)})"

    def record_helper(self, h: Helper, ctx: Ctx) -> None:
        """use(p, t) reads a record's attributes a and b (any class); mk(t, s) and step(p, t)
        return a record of a class (h.cls)."""
        env = Env()
        if h.kind == "h_record_make":
            self.emit(Ctx("", 0), f"def {h.name}(t, s):")
            env.add("t", Ty(FLOAT, FN_IN))
            env.add("s", Ty(FLOAT, FN_IN))
        else:
            self.emit(Ctx("", 0), f"def {h.name}(p, t):")
            env = self.member_env(("p.a", "p.b"))
        c = self.some_class() if h.kind != "h_record_use" else None
        if c is not None:
            h.cls = c.name
            ctx = _replace(ctx, ret="record:" + c.name)  # an early return returns a record too
        if self.rng.random() < 0.5:
            self.budget = self.rng.randint(1, 3)
            self.block(env, ctx, self.budget)
        if c is None:
            r = self.squash(self.fexpr(env, 0), FN_OUT)
            self.emit(ctx, f"return {r[0]}")
            h.bound = r[1]
            return
        self.emit(ctx, f"return {self.construct(env, c)}")

    # ------------------------------------------------------------------ statements

    def block(self, env: Env, ctx: Ctx, n: int) -> bool:
        """Up to n statements (at least one); True if the block cannot fall through."""
        for k in range(max(n, 1)):
            if k and self.budget <= 0:
                break
            if self.statement(env, ctx):
                return True
        return False

    def statement(self, env: Env, ctx: Ctx) -> bool:
        self.budget -= 1
        w = self.w
        opts: dict[str, float] = {"s_assign": w["s_assign"], "s_tuple": w["s_tuple"], "s_ifexp": w["s_ifexp"]}
        opts["s_boolop"] = w["s_boolop"]
        if env.reassignable(FLOAT):
            opts["s_reassign"] = w["s_reassign"]
            opts["s_augassign"] = w["s_augassign"]
        opts["s_list"] = w["s_list"]
        opts["s_dict"] = w["s_dict"]
        opts["s_array"] = w["s_array"]
        if env.reassignable(ARR, lambda t: t.fresh):
            opts["s_array_augassign"] = w["s_array_augassign"]
            opts["s_array_store"] = w["s_array_store"]
        if self.objects and not self.in_class:
            opts["s_record"] = w["s_record"]
            if not ctx.in_def and not self.in_def:
                opts["s_record_helper"] = w["s_record_helper"]
        if not ctx.in_def:
            opts["s_pair_call"] = w["s_pair_call"]
            opts["s_closure"] = w["s_closure"]
            opts["s_hof"] = w["s_hof"]
            opts["s_comp_name_reuse"] = w["s_comp_name_reuse"] if env.names(LIST) and "t" not in env.vars else 0.0
        if ctx.depth < MAX_DEPTH:
            opts["s_if_join"] = w["s_if_join"]
            opts["s_if_reassign"] = w["s_if_reassign"] if env.reassignable(FLOAT) else 0.0
            opts["s_if_return"] = w["s_if_return"]
            opts["s_loop"] = w["s_loop"]
            if not ctx.in_def and env.names(ARR, lambda t: len(t.shape) == 1) and env.names(FLOAT):
                opts["s_npscalar_loop"] = w["s_npscalar_loop"]
        loop = ctx.loop
        if loop is not None:
            if any(v > 0 and n not in env.frozen for n, v in loop.carried.items()):
                opts["s_carried"] = w["s_carried"]
            if loop.appends:
                opts["s_append"] = w["s_append"]
            if ctx.depth < MAX_DEPTH:
                opts["s_break_if"] = w["s_break_if"]
                opts["s_continue_if"] = w["s_continue_if"]
                opts["s_return_in_loop"] = w["s_return_in_loop"]
        kind = self.choose(opts)
        return bool(getattr(self, kind)(env, ctx))

    def store_float(self, env: Env, ctx: Ctx, name: str, e: E) -> None:
        e = self.squash(e, LIMIT)
        self.emit(ctx, f"{name} = {e[0]}")
        if name in env.vars:
            env.vars[name] = Ty(FLOAT, e[1])
        else:
            env.add(name, Ty(FLOAT, e[1]))

    def s_assign(self, env: Env, ctx: Ctx) -> None:
        self.store_float(env, ctx, self.fresh("s"), self.fexpr(env))

    def s_reassign(self, env: Env, ctx: Ctx) -> None:
        name = self.pick(env.reassignable(FLOAT))
        self.feature("reassign")
        self.store_float(env, ctx, name, self.fexpr(env))

    def s_augassign(self, env: Env, ctx: Ctx) -> None:
        name = self.pick(env.reassignable(FLOAT))
        b = env.vars[name].bound
        op = self.rng.choice(["+=", "-=", "*="])
        e = self.fexpr(env)
        if op == "*=":
            e = self.squash(e, 2.0)
            nb = b * e[1]
        else:
            e = self.squash(e, LIMIT)
            nb = b + e[1]
        self.emit(ctx, f"{name} {op} {e[0]}")
        self.feature("augassign")
        if nb > LIMIT:
            self.emit(ctx, f"{name} = math.tanh({name})")
            nb = 1.0
        env.vars[name] = Ty(FLOAT, nb)

    def s_ifexp(self, env: Env, ctx: Ctx) -> None:
        self.feature("ifexp")
        self.store_float(env, ctx, self.fresh("s"), self.e_ifexp(env, 0))

    def s_boolop(self, env: Env, ctx: Ctx) -> None:
        a, b, c = self.fexpr(env, 1), self.fexpr(env, 1), self.fexpr(env, 1)
        form = self.rng.randrange(3)
        self.feature("boolop_value")
        if form == 0:
            code = f"({self.cond(env)} and {a[0]}) or {b[0]}"
        elif form == 1:
            code = f"{a[0]} or {b[0]}"
        else:
            code = f"{a[0]} and {b[0]} or {c[0]}"
        self.store_float(env, ctx, self.fresh("s"), (code, max(a[1], b[1], c[1])))

    def s_tuple(self, env: Env, ctx: Ctx) -> None:
        self.feature("tuple")
        form = self.rng.randrange(3)
        parts = [self.squash(self.fexpr(env, 1), LIMIT) for _ in range(3)]
        t = self.fresh("tup")
        if form == 0:
            p, q, r = self.fresh("s"), self.fresh("s"), self.fresh("s")
            self.emit(ctx, f"{t} = ({parts[0][0]}, ({parts[1][0]}, {parts[2][0]}))")
            self.emit(ctx, f"{p}, ({q}, {r}) = {t}")
            for n, e in zip((p, q, r), parts):
                env.add(n, Ty(FLOAT, e[1]))
            s = self.fresh("s")
            self.emit(ctx, f"{s} = math.sin({t}[-1][0] + {t}[0])")
            env.add(s, Ty(FLOAT, 1.0))
        elif form == 1:
            n = self.rng.choice([2, 3])
            self.emit(ctx, f"{t} = ({', '.join(p[0] for p in parts[:n])})")
            env.add(t, Ty(TUPLE, max(p[1] for p in parts[:n]), length=n))
        else:
            tuples = env.names(TUPLE)
            if not tuples:
                return self.s_tuple(env, ctx) if self.rng.random() < 0.5 else self.s_assign(env, ctx)
            src = self.pick(tuples)
            ts = env.vars[src]
            names = [self.fresh("s") for _ in range(ts.length)]
            self.emit(ctx, f"{', '.join(names)} = {src}")
            for n in names:
                env.add(n, Ty(FLOAT, ts.bound))
            self.feature("tuple_unpack")

    def s_pair_call(self, env: Env, ctx: Ctx) -> None:
        h = self.helper("h_pair")
        a, b = self.arg(env, 0), self.arg(env, 0)
        p, q = self.fresh("s"), self.fresh("s")
        self.emit(ctx, f"{p}, {q} = {h.name}({a[0]}, {b[0]})")
        env.add(p, Ty(FLOAT, h.bound))
        env.add(q, Ty(FLOAT, h.bound))
        self.feature("tuple_result")

    # -- if

    def merge(self, env: Env, branches: list[Env]) -> None:
        """After an if: the fall-through branches' bounds of outer variables."""
        if not branches:
            return
        for name, t in list(env.vars.items()):
            tys = [b.vars.get(name, t) for b in branches]
            if t.kind in (FLOAT, ARR, TUPLE, DICT):
                env.vars[name] = _replace(t, bound=max(x.bound for x in tys))
            elif t.kind == LIST:
                env.vars[name] = _replace(
                    t,
                    bound=max(x.bound for x in tys),
                    length=min(x.length for x in tys),
                    maxlen=max(x.maxlen for x in tys),
                )

    def branch_end(self, env: Env, ctx: Ctx) -> bool:
        """Maybe end a branch with return/break/continue: True if it did."""
        r = self.rng.random()
        if r < 0.12:
            self.emit(ctx, f"return {self.returned(env, ctx)}")
            self.feature("early_return")
            return True
        if ctx.loop is not None and r < 0.22:
            self.emit(ctx, self.rng.choice(["break", "continue"]))
            ctx.loop.jumped = True
            self.feature("break_continue")
            return True
        return False

    def s_if_join(self, env: Env, ctx: Ctx) -> None:
        joined = self.fresh("s")
        n = self.rng.choice([2, 2, 2, 3])
        falls: list[Env] = []
        self.feature("if_else" if n == 2 else "elif")
        for k in range(n):
            header = f"if {self.cond(env)}:" if k == 0 else f"elif {self.cond(env)}:" if k < n - 1 else "else:"
            self.emit(ctx, header)
            inner = env.copy()
            ictx = ctx.inner()
            ended = False
            if self.rng.random() < 0.6:
                ended = self.block(inner, ictx, self.rng.randint(1, 2))
            if not ended and k and falls and self.rng.random() < 0.5:
                ended = self.branch_end(inner, ictx)
            if not ended:
                e = self.squash(self.fexpr(inner), LIMIT)
                self.emit(ictx, f"{joined} = {e[0]}")
                inner.vars[joined] = Ty(FLOAT, e[1])
                falls.append(inner)
        self.merge(env, falls)
        if falls:
            env.add(joined, Ty(FLOAT, max(b.vars[joined].bound for b in falls)))

    def s_if_reassign(self, env: Env, ctx: Ctx) -> None:
        name = self.pick(env.reassignable(FLOAT))
        self.emit(ctx, f"if {self.cond(env)}:")
        inner = env.copy()
        ictx = ctx.inner()
        ended = False
        if self.rng.random() < 0.5:
            ended = self.block(inner, ictx, self.rng.randint(1, 2))
        if not ended and name in inner.vars and name not in inner.frozen:
            e = self.squash(self.fexpr(inner), LIMIT)
            self.emit(ictx, f"{name} = {e[0]}")
            inner.vars[name] = Ty(FLOAT, e[1])
        self.feature("if_no_else")
        self.merge(env, [inner, env.copy()] if not ended else [env.copy()])

    def s_if_return(self, env: Env, ctx: Ctx) -> None:
        self.emit(ctx, f"if {self.cond(env)}:")
        inner = env.copy()
        ictx = ctx.inner()
        if self.rng.random() < 0.4:
            self.block(inner, ictx, 1)
        self.emit(ictx, f"return {self.returned(inner, ictx)}")
        self.feature("early_return")

    # -- loops

    def s_loop(self, env: Env, ctx: Ctx) -> None:
        w = self.w
        opts = {"loop_range": w["loop_range"], "loop_while": w["loop_while"]}
        if env.names(LIST, lambda t: t.maxlen <= 6):
            opts["loop_list"] = w["loop_list"]
            opts["loop_enumerate"] = w["loop_enumerate"]
            opts["loop_zip"] = w["loop_zip"]
        if env.names(ARR, lambda t: len(t.shape) == 1):
            opts["loop_array"] = w["loop_array"]
        if env.names(ARR, lambda t: len(t.shape) == 2):
            opts["loop_rows"] = w["loop_rows"]
        if env.names(DICT):
            opts["loop_dict"] = w["loop_dict"]
        kind = self.choose(opts)
        self.feature(kind)
        min_trips = 1
        busy = {n for n in ("i", "j", "e", "t", "u", "k", "val", "row") if n in env.vars}
        free = lambda pool: next((n for n in pool if n not in busy), self.fresh(pool[0]))  # noqa: E731
        loopvars: dict[str, Ty] = {}
        pre: list[str] = []
        if kind == "loop_range":
            i = free(["i", "j", "k"])
            ns = env.names(INT, lambda t: t.lo >= 1 and t.bound <= 5)
            form = self.rng.randrange(4)
            if form == 0 and ns:
                n = self.pick(ns)
                trips = env.vars[n].bound
                header, lo = f"for {i} in range({n}):", 0
            elif form == 1 and env.names(LIST, lambda t: t.length == t.maxlen and t.length >= 1):
                xs = self.pick(env.names(LIST, lambda t: t.length == t.maxlen and t.length >= 1))
                trips = env.vars[xs].length
                header, lo = f"for {i} in range(len({xs})):", 0
            elif form == 2:
                trips = self.rng.randint(2, 5)
                header, lo = f"for {i} in range(1, {trips + 1}):", 1
            else:
                trips = self.rng.randint(2, 5)
                header, lo = f"for {i} in range({trips}):", 0
            loopvars[i] = Ty(INT, trips - 1 + lo, lo=lo)
        elif kind == "loop_while":
            k = self.fresh("k")
            trips = self.rng.randint(2, 5)
            pre.append(f"{k} = 0")
            header = f"while {k} < {trips}:"
            loopvars[k] = Ty(INT, trips, lo=1)
        elif kind in ("loop_list", "loop_enumerate", "loop_zip"):
            xs = self.pick(env.names(LIST, lambda t: t.maxlen <= 6))
            t = env.vars[xs]
            trips, min_trips = t.maxlen, t.length
            e = free(["t", "e", "u"])
            loopvars[e] = Ty(FLOAT, t.bound)
            if kind == "loop_list":
                header = f"for {e} in {xs}:"
            elif kind == "loop_enumerate":
                i = free(["i", "j", "k"])
                loopvars[i] = Ty(INT, max(trips - 1, 0), lo=0)
                header = f"for {i}, {e} in enumerate({xs}):"
            else:
                busy.add(e)
                e2 = free(["u", "e", "t"])
                other_opts = env.names(LIST) + env.names(ARR, lambda t: len(t.shape) == 1)
                other = self.pick(other_opts)
                to = env.vars[other]
                loopvars[e2] = Ty(FLOAT, to.bound)
                min_trips = min(t.length, to.length if to.kind == LIST else to.shape[0])
                header = f"for {e}, {e2} in zip({xs}, {other}):"
        elif kind == "loop_array":
            v = self.pick(env.names(ARR, lambda t: len(t.shape) == 1))
            t = env.vars[v]
            trips = t.shape[0]
            e = free(["t", "e", "u"])
            loopvars[e] = Ty(FLOAT, t.bound)
            if self.rng.random() < 0.3:
                i = free(["i", "j", "k"])
                loopvars[i] = Ty(INT, trips - 1, lo=0)
                header = f"for {i}, {e} in enumerate({v}):"
            else:
                header = f"for {e} in {v}:"
            self.feature("np_scalar")
        elif kind == "loop_rows":
            A = self.pick(env.names(ARR, lambda t: len(t.shape) == 2))
            t = env.vars[A]
            trips = t.shape[0]
            row = free(["row", "r"])
            loopvars[row] = Ty(ARR, t.bound, shape=t.shape[1:], fresh=False)
            header = f"for {row} in {A}:"
        else:  # dicts
            d = self.pick(env.names(DICT))
            t = env.vars[d]
            trips = len(t.keys)
            k = free(["k", "key"])
            form = self.rng.randrange(5)
            if form == 0:
                header = f"for {k} in {d}:"
                loopvars[k] = Ty(STR, keys=t.keys)
            elif form == 1:
                header = f"for {k} in sorted({d}):"
                loopvars[k] = Ty(STR, keys=t.keys)
            elif form == 2:
                header = f"for {k} in {d}.keys():"
                loopvars[k] = Ty(STR, keys=t.keys)
            elif form == 3:
                val = free(["val", "v_"])
                header = f"for {k}, {val} in {d}.items():"
                loopvars[k] = Ty(STR, keys=t.keys)
                loopvars[val] = Ty(FLOAT, t.bound)
            else:
                val = free(["val", "v_"])
                header = f"for {val} in {d}.values():"
                loopvars[val] = Ty(FLOAT, t.bound)
        self.loop(env, ctx, pre, header, loopvars, max(trips, 1), min_trips, kind)

    def loop(
        self,
        env: Env,
        ctx: Ctx,
        pre: list[str],
        header: str,
        loopvars: dict[str, Ty],
        trips: int,
        min_trips: int,
        kind: str,
    ) -> None:
        """Emit a loop: accumulators before it, the header, a body updating them."""
        carried: dict[str, int] = {}
        appends: set[str] = set()
        inflate = lambda b: b + 4.0 * trips  # noqa: E731
        # loop-carried variables: new accumulators or existing floats
        r = self.rng.random()
        if r < 0.6 or not env.reassignable(FLOAT):
            s = self.fresh("s")
            init = self.rng.choice(["0.0", "0.0", "1.0", None])
            e = (init, float(init)) if init else self.squash(self.fexpr(env), 2.0)
            self.emit(ctx, f"{s} = {e[0]}")
            env.add(s, Ty(FLOAT, e[1]))
            carried[s] = 2
        if r >= 0.4 and env.reassignable(FLOAT):
            carried[self.pick(env.reassignable(FLOAT))] = 2
        if self.rng.random() < 0.35:
            ys = self.fresh("lst")
            self.emit(ctx, f"{ys} = []")
            env.add(ys, Ty(LIST, 0.0, length=0, maxlen=0))
            appends.add(ys)
            env.locked.add(ys)
        if self.objects and self.rng.random() < self.w["loop_record"]:
            c = self.some_class()
            acc = self.fresh("ob")
            self.emit(ctx, f"{acc} = {self.construct(env, c)}")
            env.add(acc, Ty(REC, cls=c.name))
            carried[acc] = 2
            self.feature("loop_carried_record")
        if self.rng.random() < 0.2:
            shape = self.rng.choice([(3,), (2,), (3, 2)])
            acc = self.fresh("arr")
            e = self.a_constructor(env, shape, 2) if self.rng.random() < 0.7 else self.aexpr(env, shape, 1)
            e = self.asquash(e, 2.0)
            if not e[2]:
                e = (f"({e[0]} * 1.0)", e[1], True)
            self.emit(ctx, f"{acc} = {e[0]}")
            env.add(acc, Ty(ARR, e[1], shape=shape, fresh=True))
            carried[acc] = 2
            self.feature("loop_carried_array")
        for name in carried:
            env.vars[name] = _replace(env.vars[name], bound=inflate(env.vars[name].bound))
        for line in pre:
            self.emit(ctx, line)
        self.emit(ctx, header)
        body = env.copy()
        body.assignable = set()
        for name, t in loopvars.items():
            body.add(name, t)
        info = Loop(trips, dict(carried), appends)
        ictx = ctx.inner(loop=info, loop_depth=ctx.depth + 1)
        if kind == "loop_while":
            k = next(iter(loopvars))
            self.emit(ictx, f"{k} += 1")
        self.block(body, ictx, self.rng.randint(1, 3))
        # every accumulator is updated, every list appended (unless the body already did)
        for name in carried:
            if name not in info.updated and name not in body.frozen:
                self.carried_update(body, ictx, name)
        for ys in appends:
            if ys not in info.appended:
                self.append(body, ictx, ys)
        for ys in appends:
            t = body.vars[ys]
            sure = ys in info.sure and min_trips >= 1
            env.vars[ys] = Ty(LIST, t.bound, length=1 if sure else 0, maxlen=trips * 2)
            env.locked.discard(ys)

    def carried_update(self, env: Env, ctx: Ctx, name: str) -> None:
        loop = ctx.loop
        assert loop is not None
        loop.carried[name] -= 1
        loop.updated.add(name)
        t = env.vars[name]
        self.feature("loop_carried")
        if t.kind == ARR:
            e = self.asquash(self.aexpr(env, t.shape, 1), 2.0)
            form = self.rng.randrange(3)
            if form == 0:
                self.emit(ctx, f"{name} = {name} + {e[0]}")
            elif form == 1:
                self.emit(ctx, f"{name} += {e[0]}")
            else:
                self.emit(ctx, f"{name} = np.tanh({name} * {self.const()[0]} + {e[0]})")
            return
        if t.kind == REC:  # a new record of the class, from the previous one's attributes
            c = self.class_info(t.cls)
            args = []
            for k in range(c.required):
                e = self.squash(self.fexpr(env, 1), 2.0)
                args.append(self.squash((f"{name}.{c.fields[k]} * 0.5 + {e[0]}", ATTR * 0.5 + e[1]), CTOR_IN)[0])
            self.emit(ctx, f"{name} = {c.name}({', '.join(args)})")
            return
        form = self.rng.randrange(6)
        e = self.squash(self.fexpr(env, 0), 2.0)
        if form == 0:
            self.emit(ctx, f"{name} = {name} + {e[0]}")
        elif form == 1:
            self.emit(ctx, f"{name} += {e[0]}")
        elif form == 2:
            self.emit(ctx, f"{name} -= {e[0]}")
        elif form == 3:
            self.emit(ctx, f"{name} *= {self.squash(e)[0]}")
        elif form == 4:
            self.emit(ctx, f"{name} = math.tanh({name} + {e[0]})")
        else:
            self.emit(ctx, f"{name} = {name} * 0.5 + {e[0]}")

    def s_carried(self, env: Env, ctx: Ctx) -> None:
        loop = ctx.loop
        assert loop is not None
        names = [n for n, v in loop.carried.items() if v > 0 and n not in env.frozen]
        self.carried_update(env, ctx, self.rng.choice(names))

    def append(self, env: Env, ctx: Ctx, ys: str) -> None:
        loop = ctx.loop
        assert loop is not None
        e = self.squash(self.fexpr(env), LIMIT)
        if self.rng.random() < 0.15:
            self.emit(ctx, f"{ys} = {ys} + [{e[0]}]")
        else:
            self.emit(ctx, f"{ys}.append({e[0]})")
        t = env.vars[ys]
        env.vars[ys] = _replace(t, bound=max(t.bound, e[1]))
        loop.appended.add(ys)
        if ctx.depth == ctx.loop_depth and not loop.jumped:
            loop.sure.add(ys)
        self.feature("append")

    def s_append(self, env: Env, ctx: Ctx) -> None:
        loop = ctx.loop
        assert loop is not None
        self.append(env, ctx, self.rng.choice(sorted(loop.appends)))

    def jump_if(self, env: Env, ctx: Ctx, what: str) -> None:
        """`if cond: [statement] break|continue|return ...` inside a loop."""
        loop = ctx.loop
        assert loop is not None
        self.emit(ctx, f"if {self.cond(env)}:")
        ictx = ctx.inner()
        inner = env.copy()
        if self.rng.random() < 0.3:
            self.s_assign(inner, ictx)
        if what == "return":
            self.emit(ictx, f"return {self.returned(inner, ictx)}")
            self.feature("return_in_loop")
            return
        self.emit(ictx, what)
        loop.jumped = True
        self.feature(what)

    def s_break_if(self, env: Env, ctx: Ctx) -> None:
        self.jump_if(env, ctx, "break")

    def s_continue_if(self, env: Env, ctx: Ctx) -> None:
        self.jump_if(env, ctx, "continue")

    def s_return_in_loop(self, env: Env, ctx: Ctx) -> None:
        self.jump_if(env, ctx, "return")

    def s_npscalar_loop(self, env: Env, ctx: Ctx) -> None:
        """s = 0.0; for i in range(len(a)): s = s + a[i] * a[i] * w (NumPy scalars meet Python floats)."""
        a = self.pick(env.names(ARR, lambda t: len(t.shape) == 1))
        t = env.vars[a]
        x = self.pick(env.names(FLOAT))
        bx = env.vars[x].bound
        s = self.fresh("s")
        i = "i" if "i" not in env.vars else self.fresh("i")
        form = self.rng.randrange(3)
        self.emit(ctx, f"{s} = 0.0")
        if form == 0:
            self.emit(ctx, f"for {i} in range(len({a})):")
            self.emit(ctx.inner(), f"{s} = {s} + {a}[{i}] * {a}[{i}] * {x}")
            b = t.shape[0] * t.bound**2 * bx
        elif form == 1:
            self.emit(ctx, f"for {i} in range({t.shape[0]}):")
            self.emit(ctx.inner(), f"{s} += {x} * {a}[{i}]")
            b = t.shape[0] * t.bound * bx
        else:
            self.emit(ctx, f"for t_ in {a}:")
            self.emit(ctx.inner(), f"{s} = {s} * 0.5 + math.sin(t_ * {x})")
            b = 2.0
        env.add(s, Ty(FLOAT, b))
        self.feature("np_scalar_loop")
        if b > LIMIT:
            self.emit(ctx, f"{s} = math.tanh({s})")
            env.vars[s] = Ty(FLOAT, 1.0)

    # -- records

    def s_record(self, env: Env, ctx: Ctx) -> None:
        """ob = C(e1, e2): a new record, or a record variable rebound to another of its class."""
        again = env.reassignable(REC)
        if again and self.rng.random() < 0.25:
            name = self.pick(again)
            c = self.class_info(env.vars[name].cls)
            self.feature("record_rebind")
        else:
            name, c = self.fresh("ob"), self.some_class()
        self.emit(ctx, f"{name} = {self.construct(env, c)}")
        env.add(name, Ty(REC, cls=c.name))
        self.feature("obj_construct")

    def s_record_helper(self, env: Env, ctx: Ctx) -> None:
        """ob = mk(e1, e2), or ob = step(ob, e): a record made by a helper."""
        kinds = {"h_record_make": 1.0}
        if env.names(REC):
            kinds["h_record_step"] = 1.0
        h = self.helper(self.choose(kinds))
        a, b = self.arg(env, 0), self.arg(env, 0)
        code = (
            f"{h.name}({a[0]}, {b[0]})"
            if h.kind == "h_record_make"
            else f"{h.name}({self.pick(env.names(REC))}, {a[0]})"
        )
        name = self.fresh("ob")
        self.emit(ctx, f"{name} = {code}")
        env.add(name, Ty(REC, cls=h.cls))
        self.feature("record_from_helper")

    # -- lists, dicts, arrays

    def s_list(self, env: Env, ctx: Ctx) -> None:
        code, t = self.lexpr(env)
        name = self.fresh("lst")
        self.emit(ctx, f"{name} = {code}")
        env.add(name, t)

    def s_comp_name_reuse(self, env: Env, ctx: Ctx) -> None:
        """A comprehension variable `t`, then `t` as an ordinary variable."""
        xs, t = self.some_list(env)
        name = self.fresh("lst")
        self.emit(ctx, f"{name} = [t * {self.const()[0]} for t in {xs}]")
        env.add(name, _replace(t, bound=t.bound * 2))
        self.store_float(env, ctx, "t", self.fexpr(env))
        self.feature("comp_name_reuse")

    def s_dict(self, env: Env, ctx: Ctx) -> None:
        name = self.fresh("dct")
        dicts = env.names(DICT)
        if dicts and self.rng.random() < self.w["s_dict_comp"]:
            d = self.pick(dicts)
            t = env.vars[d]
            c = self.const()
            self.emit(ctx, f"{name} = {{k: {d}[k] * {c[0]} for k in {d}}}")
            env.add(name, _replace(t, bound=t.bound * c[1]))
            self.feature("dict_comp")
            return
        keys = self.rng.sample(KEYS, self.rng.randint(2, 3))
        parts = [self.squash(self.fexpr(env, 1), LIMIT) for _ in keys]
        self.emit(ctx, f"{name} = {{{', '.join(f'{k!r}: {p[0]}' for k, p in zip(keys, parts))}}}")
        env.add(name, Ty(DICT, max(p[1] for p in parts), keys=tuple(keys)))
        self.feature("dict_literal")

    def array_shape(self, env: Env) -> tuple[int, ...]:
        shapes = [(3,), (2,), (3, 2), (3,), (2, 3), (3, 1), (1, 2)]
        shapes += [env.vars[n].shape for n in env.names(ARR)] * 2
        return self.rng.choice(shapes)

    def s_array(self, env: Env, ctx: Ctx) -> None:
        shape = self.array_shape(env)
        e = self.aexpr(env, shape)
        if not e[2]:  # a view or another name for an array: copy it, so `+=` on it is safe
            e = (f"({e[0]} * 1.0)", e[1], True)
        if e[1] > LIMIT:
            e = self.asquash(e)
        name = self.fresh("arr")
        self.emit(ctx, f"{name} = {e[0]}")
        env.add(name, Ty(ARR, e[1], shape=shape, fresh=True))

    def s_array_augassign(self, env: Env, ctx: Ctx) -> None:
        name = self.pick(env.reassignable(ARR, lambda t: t.fresh))
        t = env.vars[name]
        e = self.asquash(self.aexpr(env, t.shape, 1), 2.0)
        op = self.rng.choice(["+=", "-=", "*="])
        self.emit(ctx, f"{name} {op} {e[0]}")
        nb = t.bound * e[1] if op == "*=" else t.bound + e[1]
        if nb > LIMIT:
            self.emit(ctx, f"{name} = np.tanh({name})")
            nb = 1.0
        env.vars[name] = _replace(t, bound=nb)
        self.feature("array_augassign")

    def s_array_store(self, env: Env, ctx: Ctx) -> None:
        """An element, row, column or slice of an array the function made, assigned or updated in place."""
        name = self.pick(env.reassignable(ARR, lambda t: t.fresh))
        t = env.vars[name]
        shape = t.shape
        if len(shape) == 1:
            n = shape[0]
            a = self.rng.randrange(n)
            b = self.rng.randrange(a + 1, n + 1)
            forms = [
                (f"{name}[{a}]", ()),
                (f"{name}[{a - n}]", ()),
                (f"{name}[{a}:{b}]", (b - a,)),
                (f"{name}[{a}:]", (n - a,)),
            ]
        else:
            r, c = shape
            i, j = self.rng.randrange(r), self.rng.randrange(c)
            forms = [(f"{name}[{i}, {j}]", ()), (f"{name}[{i}]", (c,)), (f"{name}[:, {j}]", (r,))]
        target, part = self.rng.choice(forms)
        e = self.squash(self.fexpr(env, 1), 2.0) if part == () else self.asquash(self.aexpr(env, part, 1), 2.0)
        op = self.rng.choice(["=", "=", "+=", "-=", "*="])
        if part == () and self.rng.random() < 0.25:  # through a view of the array: `name` shares the write
            view = self.fresh("view")
            if len(shape) == 1:
                made, target = self.rng.choice([(f"{name}[{a}:]", "[0]"), (f"{name}.reshape(1, {n})", f"[0, {a}]")])
            else:
                made, target = self.rng.choice(
                    [
                        (f"{name}[{i}]", f"[{j}]"),
                        (f"{name}[:, {j}]", f"[{i}]"),
                        (f"{name}.T", f"[{j}, {i}]"),
                        (f"{name}.reshape({r * c})", f"[{i * c + j}]"),
                    ]
                )
            self.emit(ctx, f"{view} = {made}")
            target = view + target
            self.feature("array_store_view")
        elif self.rng.random() < 0.3:  # through a copy of the name: the same object, so `name` sees the write
            alias = self.fresh("alias")
            self.emit(ctx, f"{alias} = {name}")
            target = alias + target[len(name) :]
            self.feature("array_store_alias")
        self.emit(ctx, f"{target} {op} {e[0]}")
        nb = max(t.bound, e[1]) if op == "=" else t.bound * e[1] if op == "*=" else t.bound + e[1]
        if nb > LIMIT:
            self.emit(ctx, f"{name} = np.tanh({name})")
            nb = 1.0
        env.vars[name] = _replace(t, bound=nb)
        self.feature("array_store")

    # -- closures and functions as values

    def s_closure(self, env: Env, ctx: Ctx) -> None:
        kind = self.choose({"c_lambda": self.w["c_lambda"], "c_def": self.w["c_def"], "c_rec": self.w["c_rec"]})
        g = self.fresh("g")
        self.feature(kind)
        read: set[str] = set()
        self.reads.append(read)
        inner = env.copy()
        param = self.rng.choice(["t", "z", "q"])
        inner.add(param, Ty(FLOAT, FN_IN))
        inner.assignable = {param}
        inner.locked = set(env.locked)
        if kind == "c_lambda":
            body = self.squash(self.fexpr(inner, 0), FN_OUT)
            if ctx.loop is not None and self.rng.random() < 0.3:
                # the default-parameter idiom binds a value at creation
                names = [n for n in env.names(FLOAT) if n != param]
                if names:
                    c = self.pick(names)
                    self.emit(ctx, f"{g} = lambda {param}, {c}={c}: {body[0]}")
                    self.feature("lambda_default")
                    bound = body[1]
                    self.reads.pop()
                    env.add(g, Ty(FN, bound))
                    env.frozen |= read - {param}
                    return
            self.emit(ctx, f"{g} = lambda {param}: {body[0]}")
            bound = body[1]
        elif kind == "c_def":
            self.emit(ctx, f"def {g}({param}):")
            ictx = Ctx(ctx.indent + "    ", ctx.depth + 1, in_def=True, ret="bounded")
            saved, self.in_def = self.in_def, True
            if ctx.depth + 1 < MAX_DEPTH or self.rng.random() < 0.5:
                self.block(inner, ictx, self.rng.randint(1, 2))
            self.in_def = saved
            body = self.squash(self.fexpr(inner, 0), FN_OUT)
            self.emit(ictx, f"return {body[0]}")
            bound = body[1]
        else:
            a = self.squash(self.fexpr(env, 1), 1.0)
            self.emit(ctx, f"def {g}({param}, m=2):")
            ictx = Ctx(ctx.indent + "    ", ctx.depth + 1, in_def=True)
            if self.rng.random() < 0.5:
                self.emit(ictx, f"return {param} if m <= 0 else {g}(math.tanh({param} * {a[0]}), m - 1)")
            else:
                self.emit(ictx, "if m <= 0:")
                self.emit(ictx.inner(), f"return {param}")
                self.emit(ictx, f"return {g}(math.sin({param}) * {a[0]} + 0.5, m - 1)")
            bound = FN_OUT
            self.feature("recursion")
        self.reads.pop()
        env.add(g, Ty(FN, bound))
        env.frozen |= {n for n in read if n in env.vars and n != param}

    def s_hof(self, env: Env, ctx: Ctx) -> None:
        if env.names(LIST) and self.rng.random() < 0.4:
            code, t = self.rng.choice([self.l_map, self.l_sorted_key])(env, 0)
            name = self.fresh("lst")
            self.emit(ctx, f"{name} = {code}")
            env.add(name, t)
            return
        self.store_float(env, ctx, self.fresh("s"), self.e_hof_call(env, 0))

    # ------------------------------------------------------------------ results

    def returned(self, env: Env, ctx: Ctx) -> str:
        """The expression of a `return` here: f's result, or a helper's or nested def's."""
        if ctx.ret == "pair":
            a, b = self.squash(self.fexpr(env), FN_OUT), self.squash(self.fexpr(env), FN_OUT)
            return f"({a[0]}, {b[0]})"
        if ctx.ret == "bounded":
            return self.squash(self.fexpr(env), FN_OUT)[0]
        if ctx.ret.startswith("record:"):
            return self.construct(env, self.class_info(ctx.ret.removeprefix("record:")))
        return self.result(env)

    def result(self, env: Env) -> str:
        """A float combining some live variables (recent ones more likely)."""
        candidates = [
            n for n in env.order if env.vars[n].kind in (FLOAT, ARR, LIST, DICT, TUPLE, REC) and n not in env.locked
        ]
        recent = candidates[-6:]
        k = min(len(recent), self.rng.randint(1, 4))
        picked = self.rng.sample(recent, k) if recent else []
        terms = []
        coeffs = itertools.cycle(["1.0", "0.5", "-1.5", "2.0", "0.25"])
        for name in picked:
            self.use(name)
            t = env.vars[name]
            c = next(coeffs)
            if t.kind == FLOAT:
                terms.append(f"{name} * {c}")
            elif t.kind == ARR:
                terms.append(
                    self.rng.choice(
                        [f"np.sum(np.tanh({name})) * {c}", f"np.sum({name}) * {c}", f"np.mean({name} ** 2)"]
                    )
                )
            elif t.kind == LIST:
                terms.append(f"sum({name}) * {c}")
            elif t.kind == DICT:
                terms.append(f"{name}[{self.rng.choice(t.keys)!r}] * {c}")
            elif t.kind == REC:
                terms.append(f"{name}.{self.rng.choice(self.class_info(t.cls).fields)} * {c}")
            else:
                terms.append(f"{name}[0] * {c}")
        if not terms:
            terms = ["0.5"]
        return " + ".join(terms)

    # ------------------------------------------------------------------ the program

    def params(self) -> tuple[list[str], list[Ty], list[object]]:
        w = self.w
        n = self.rng.choice([1, 2, 2, 3, 3, 4])
        choices = {
            k: w[k] for k in ("p_float", "p_array", "p_matrix", "p_list", "p_dict", "p_tuple", "p_int", "p_index")
        }
        if self.objects:
            choices["p_record"] = w["p_record"]
        kinds = [self.choose(choices) for _ in range(n)]
        if not any(k in ("p_float", "p_array", "p_matrix", "p_list", "p_dict", "p_tuple", "p_record") for k in kinds):
            kinds.insert(0, "p_float")
        names, tys, values = [], [], []
        rng = self.np_rng
        for k in kinds:
            if k == "p_float":
                names.append(self.fresh("x"))
                tys.append(Ty(FLOAT, ARG_BOUND))
                values.append(float(rng.uniform(-ARG_BOUND, ARG_BOUND)))
            elif k in ("p_array", "p_matrix"):
                shape = (
                    self.rng.choice([(3,), (3,), (2,)]) if k == "p_array" else self.rng.choice([(3, 2), (3, 2), (2, 3)])
                )
                names.append(self.fresh("v" if k == "p_array" else "m"))
                tys.append(Ty(ARR, ARG_BOUND, shape=shape, fresh=False))
                values.append(rng.uniform(-ARG_BOUND, ARG_BOUND, shape))
            elif k == "p_list":
                n = self.rng.choice([2, 3, 3, 4])
                names.append(self.fresh("xs"))
                tys.append(Ty(LIST, ARG_BOUND, length=n, maxlen=n))
                values.append([float(v) for v in rng.uniform(-ARG_BOUND, ARG_BOUND, n)])
            elif k == "p_dict":
                keys = tuple(self.rng.sample(KEYS, self.rng.randint(2, 3)))
                if self.rng.random() < 0.5:
                    keys = ("a", "b") + tuple(k for k in keys if k not in ("a", "b"))
                names.append(self.fresh("d"))
                tys.append(Ty(DICT, ARG_BOUND, keys=keys))
                values.append({key: float(rng.uniform(-ARG_BOUND, ARG_BOUND)) for key in keys})
            elif k == "p_tuple":
                n = self.rng.choice([2, 3])
                names.append(self.fresh("p"))
                tys.append(Ty(TUPLE, ARG_BOUND, length=n))
                values.append(tuple(float(v) for v in rng.uniform(-ARG_BOUND, ARG_BOUND, n)))
            elif k == "p_record":
                c = self.some_class(("o_namedtuple", "o_dataclass"))
                names.append(self.fresh("pr"))
                tys.append(Ty(REC, cls=c.name))
                fields = tuple((f, float(rng.uniform(-ARG_BOUND, ARG_BOUND))) for f in c.params)
                values.append(RecordArg(c.name, fields))
                self.feature("record_arg")
            elif k == "p_int":
                v = self.rng.randint(2, 4)
                names.append(self.fresh("n"))
                tys.append(Ty(INT, v, lo=v))
                values.append(v)
            else:
                n = self.rng.choice([2, 3])
                top = self.rng.choice([1, 2])
                names.append(self.fresh("idx"))
                tys.append(Ty(IARR, top, shape=(n,)))
                values.append(np.array([self.rng.randint(0, top) for _ in range(n)]))
        return names, tys, values

    def program(self) -> Program:
        for _ in range(self.rng.choice([0, 0, 1, 2])):
            name = f"C{len(self.consts)}"
            self.consts.append((name, self.rng.choice([0.75, -0.5, 1.5, 0.2])))
        if self.data_rng.random() < self.w["module_data"]:
            for k in range(self.data_rng.choice([1, 2])):
                kind = self.data_rng.choice(["array", "list", "tuple"])
                values = [
                    self.data_rng.choice([0.5, -1.0, 1.25, 0.2, -0.75]) for _ in range(self.data_rng.randint(1, 4))
                ]
                self.data.append((f"D{k}", kind, values))
        if self.objects and self.rng.random() < self.w["outside_obj"]:
            c = self.some_class()
            if c.callable and self.rng.random() >= self.w["outside_callable"]:
                c = self.some_class(("o_dataclass", "o_namedtuple"))
            args = ", ".join(self.rng.choice(CONSTS[:4] + ("-0.25", "1.5")) for _ in range(c.required))
            self.outside.append((f"O{len(self.outside)}", c, args))
        names, tys, values = self.params()
        env = Env()
        for n, t in zip(names, tys):
            env.add(n, t)
        ctx = Ctx(indent="    ", depth=0)
        self.budget = self.rng.randint(3, 15)
        self.emit(Ctx("", 0), f"def f({', '.join(names)}):")
        ended = self.block(env, ctx, self.budget)
        if not ended:
            self.emit(ctx, f"return {self.result(env)}")
        diff = [i for i, t in enumerate(tys) if t.kind in DIFFERENTIABLE]
        k = self.rng.randint(1, len(diff))
        chosen = sorted(self.rng.sample(diff, k))
        if self.rng.random() < self.w["argnums_unsorted"]:
            self.rng.shuffle(chosen)
        argnums: int | tuple[int, ...]
        argnums = chosen[0] if len(chosen) == 1 and self.rng.random() < self.w["argnums_int"] else tuple(chosen)
        return Program(self.seed, self.module(), tuple(values), argnums, tuple(sorted(self.features)))

    def module(self) -> str:
        head = ["import functools"] if self.uses_functools else []
        head.append("import math")
        head += [
            f"from {m} import {n}"
            for m, n in (("collections", "namedtuple"), ("dataclasses", "dataclass"))
            if n in self.imports
        ]
        parts = ["\n".join(head) + "\n\nimport numpy as np\n" + ("import scipy.special\n" if self.uses_scipy else "")]
        if self.consts:
            parts.append("\n".join(f"{n} = {v!r}" for n, v in self.consts) + "\n")
        if self.data:
            spelled = {"array": "np.array({!r})", "list": "{!r}", "tuple": "{!r}"}
            parts.append(
                "\n".join(f"{n} = {spelled[k].format(v if k != 'tuple' else tuple(v))}" for n, k, v in self.data) + "\n"
            )
        for lines in self.class_lines:
            parts.append("\n" + normalize("\n".join(lines)))
        if self.outside:
            parts.append("\n" + "\n".join(f"{n} = {c.name}({args})" for n, c, args in self.outside) + "\n")
        for lines in self.helper_lines:
            parts.append("\n" + normalize("\n".join(lines)))
        if self.partials:
            parts.append("\n" + "\n".join(self.partials) + "\n")
        parts.append("\n" + normalize("\n".join(self.lines)))
        return "\n".join(parts)


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


def generate(seed: int, weights: dict[str, float] | None = None) -> Program:
    """A random valid program, deterministic in `seed` (and the weights)."""
    w = dict(WEIGHTS)
    if weights:
        unknown = set(weights) - set(WEIGHTS)
        if unknown:
            raise KeyError(f"unknown weights: {sorted(unknown)}")
        w.update(weights)
    return _Gen(seed, w).program()
