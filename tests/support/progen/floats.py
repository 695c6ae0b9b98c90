"""Float expressions: variables, constants, operators, `math`, reductions of arrays and lists, calls (`e_*`)."""

from __future__ import annotations

import math

import numpy as np

from .base import Base
from .core import ARR, ATTR, DICT, FLOAT, FN, FN_IN, INT, LIST, REC, SPECIAL, STR, TUPLE, E, Env, Ty


class Floats(Base):
    """Float expressions: variables, constants, operators, `math`, reductions of arrays and lists, calls (`e_*`)."""

    def squash(self, e: E, limit: float = 1.0) -> E:
        """e itself if its bound is within limit, else a squashed e."""
        code, b = e[0], e[1]
        if b <= limit:
            return e
        fn = self.rng.choice(["math.tanh", "math.sin", "math.atan", "math.tanh"])
        return f"{fn}({code})", (math.pi / 2 if fn == "math.atan" else 1.0)

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
