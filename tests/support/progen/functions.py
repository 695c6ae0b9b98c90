"""Helper functions, function values and parameters."""

from __future__ import annotations

import math

import numpy as np

from .base import Base
from .core import (
    ARG_BOUND,
    ARR,
    DICT,
    FLOAT,
    FN,
    FN_IN,
    FN_OUT,
    IARR,
    INT,
    KEYS,
    LIST,
    REC,
    TUPLE,
    Ctx,
    E,
    Env,
    Helper,
    RecordArg,
    Ty,
)


class Functions(Base):
    """Helper functions, function values and parameters."""

    def arg(self, env: Env, depth: int, limit: float = FN_IN) -> E:
        return self.squash(self.fexpr(env, depth + 1), limit)

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

    def body_ctx(self) -> Ctx:
        """Where a method's statements go (compound statements allowed, as in a helper)."""
        return Ctx("        ", 0, in_def=True, ret="bounded")

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
                tys.append(Ty(REC, cls=c.name, fresh=False))  # the caller's: never assigned to
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
