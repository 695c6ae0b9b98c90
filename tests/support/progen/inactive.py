"""Code no derivative flows through, mixed into active code (issue 37, `x_*`): a `raise` in a branch no call
takes, `assert`, a module-level counter (`global`), an evaluation log, `np.finfo`, `del`, `import` inside the
function, a class statement used as data, writes into a module-level object's attributes.

Each statement runs at every call exactly as in the plain call (the conditions are never or always true at the
generator's bounds) and only the module's own state changes (`CALLS`, `LOG`, `STATE`, module-level in `Base`),
which no result reads: f stays a function of its arguments."""

from __future__ import annotations

import math

from .base import Base
from .core import ARR, DICT, FLOAT, INT, LIMIT, LIST, STR, Ctx, Env, Ty

WORDS = ("out of range", "not finite", "unexpected shape", "bad input", "diverged")


class Inactive(Base):
    """Code no derivative flows through, mixed into active code (issue 37, `x_*`)."""

    def data_kinds(self, env: Env) -> dict[str, float]:
        kinds = {}
        for kind, weight in ((FLOAT, 3.0), (INT, 2.0), (ARR, 1.5), (LIST, 1.0), (DICT, 0.5)):
            if env.names(kind):
                kinds[kind] = weight
        return kinds

    def never(self, env: Env) -> str:
        """A condition false at every call (by the generator's bounds): a branch no call takes."""
        kinds = self.data_kinds(env)
        if not kinds:
            return "math.pi < 3.0"
        kind = self.choose(kinds)
        v = self.pick(env.names(kind))
        t = env.vars[v]
        if kind == FLOAT:
            forms = [f"abs({v}) > 1e9", f"{v} != {v}", f"not math.isfinite({v})", f"math.isnan({v})"]
        elif kind == INT:
            forms = [f"{v} < {t.lo}", f"{v} > {t.bound}", f"not isinstance({v}, int)"]
        elif kind == ARR:
            forms = [f"np.any(np.isnan({v}))", f"not np.all(np.isfinite({v}))", f"{v}.shape != {t.shape!r}"]
            forms += [f"{v}.ndim != {len(t.shape)}", f"np.max(np.abs({v})) > 1e9"]
        elif kind == LIST:
            forms = [f"len({v}) > {t.maxlen}", f"len({v}) < {t.length}", f"not isinstance({v}, list)"]
        else:
            forms = [f"'zz' in {v}", f"len({v}) != {len(t.keys)}"]
        return self.rng.choice(forms)

    def always(self, env: Env) -> str:
        """A condition true at every call (an assertion that holds)."""
        kinds = self.data_kinds(env)
        if not kinds:
            return "math.pi > 3.0"
        kind = self.choose(kinds)
        v = self.pick(env.names(kind))
        t = env.vars[v]
        if kind == FLOAT:
            forms = [f"math.isfinite({v})", f"abs({v}) < 1e9", f"{v} == {v}"]
        elif kind == INT:
            forms = [f"{v} >= {t.lo}", f"{t.lo} <= {v} <= {t.bound}", f"isinstance({v}, int)"]
        elif kind == ARR:
            forms = [f"np.all(np.isfinite({v}))", f"{v}.shape == {t.shape!r}", f"{v}.ndim == {len(t.shape)}"]
        elif kind == LIST:
            forms = [f"len({v}) >= {t.length}", f"len({v}) <= {t.maxlen}", f"isinstance({v}, list)"]
        else:
            forms = [f"{self.rng.choice(t.keys)!r} in {v}", f"len({v}) == {len(t.keys)}"]
        return self.rng.choice(forms)

    def message(self, env: Env) -> str:
        """An exception's or assertion's message: a string, formatted with values (active ones too: data)."""
        words = self.rng.choice(WORDS)
        form = self.rng.randrange(5)
        if form == 1 and env.names(INT):
            return f"'{words}: k = {{}}'.format({self.pick(env.names(INT))})"
        if form == 2 and env.names(FLOAT):
            v = self.pick(env.names(FLOAT))
            return f"f'{words}: {v} = {{{v}:.3g}}'"
        if form == 3 and env.names(FLOAT):
            return f"'{words} (%.3f)' % {self.pick(env.names(FLOAT))}"
        if form == 4 and env.names(LIST):
            return f"'{{}} elements'.format(len({self.pick(env.names(LIST))}))"
        return repr(words)

    def inactive_value(self, env: Env) -> str:
        """A value no derivative flows into (an int, a string, a shape; an active float formatted)."""
        opts: dict[str, float] = {"literal": 0.5}
        if env.names(INT):
            opts["int"] = 3.0
        if env.names(STR):
            opts["str"] = 1.0
        if env.names(LIST):
            opts["len"] = 1.0
        if env.names(ARR):
            opts["shape"] = 0.5
        if env.names(FLOAT):
            opts["formatted"] = 1.5
        kind = self.choose(opts)
        if kind == "int":
            return self.pick(env.names(INT))
        if kind == "str":
            return self.pick(env.names(STR))
        if kind == "len":
            return f"len({self.pick(env.names(LIST))})"
        if kind == "shape":
            return f"{self.pick(env.names(ARR))}.shape"
        if kind == "formatted":
            v = self.pick(env.names(FLOAT))
            return self.rng.choice([f"f'{{{v}:.4f}}'", f"'{{:.3f}}'.format({v})", f"round(float({v}), 3)"])
        return repr(self.rng.choice(["step", "eval", "start"]))

    def x_raise_guard(self, env: Env, ctx: Ctx) -> None:
        """if <never>: raise ValueError(...)"""
        cond = self.never(env)
        exc = self.rng.choice(["ValueError", "ArithmeticError", "RuntimeError", "FloatingPointError", "TypeError"])
        msg = self.message(env) if self.rng.random() < 0.8 else ""
        self.emit(ctx, f"if {cond}:")
        self.emit(ctx.inner(), f"raise {exc}({msg})")
        self.feature("raise_guard")

    def x_assert(self, env: Env, ctx: Ctx) -> None:
        """assert <always>, "msg {}".format(k)"""
        cond = self.always(env)
        msg = f", {self.message(env)}" if self.rng.random() < 0.7 else ""
        self.emit(ctx, f"assert {cond}{msg}")
        self.feature("assert")

    def x_global(self, env: Env, ctx: Ctx) -> None:
        """CALLS += 1 (f says `global CALLS`), maybe read back as data: min(CALLS, 1) is 1 at every call."""
        self.module_state.add("CALLS")
        self.emit(ctx, self.rng.choice(["CALLS += 1", "CALLS = CALLS + 1"]))
        self.feature("global_counter")
        if self.rng.random() < 0.3:
            e = self.squash(self.fexpr(env, 1), LIMIT)
            self.store_float(env, ctx, self.fresh("s"), (f"{e[0]} * min(CALLS, 1)", e[1]))
            self.feature("global_counter_read")

    def x_log(self, env: Env, ctx: Ctx) -> None:
        """LOG.append(k) on a module-level list (of values no derivative flows into)."""
        self.module_state.add("LOG")
        r = self.rng.random()
        if r < 0.65:
            self.emit(ctx, f"LOG.append({self.inactive_value(env)})")
        elif r < 0.8:
            self.emit(ctx, f"LOG.append(({self.inactive_value(env)}, {self.inactive_value(env)}))")
        elif r < 0.93:
            self.emit(ctx, f"LOG.extend([{self.inactive_value(env)}, {self.inactive_value(env)}])")
        else:
            self.emit(ctx, "if len(LOG) > 1000000:")
            self.emit(ctx.inner(), "LOG.clear()")
        self.feature("log")

    def x_eps(self, env: Env, ctx: Ctx) -> None:
        """eps = np.finfo(float).eps, then eps in arithmetic (and a float variable from then on)."""
        eps = self.fresh("eps")
        arrays = env.names(ARR)
        forms = ["np.finfo(float).eps", "np.finfo(np.float64).eps", "np.finfo(float).tiny"]
        if arrays:
            forms.append(f"np.finfo({self.pick(arrays)}.dtype).eps")
        self.emit(ctx, f"{eps} = {self.rng.choice(forms)}")
        env.add(eps, Ty(FLOAT, 1e-15))
        self.feature("finfo_eps")
        e = self.squash(self.fexpr(env, 1), 30.0)
        form = self.rng.randrange(5)
        if form == 4 and arrays:
            a = self.pick(arrays)
            t = env.vars[a]
            name = self.fresh("arr")
            self.emit(ctx, f"{name} = np.sqrt({a} * {a} + {eps})")
            env.add(name, Ty(ARR, t.bound + 1e-7, shape=t.shape, fresh=True))
            return
        if form == 0:
            code, b = f"math.sqrt({e[0]} * {e[0]} + {eps})", e[1] + 1e-7
        elif form == 1:
            code, b = f"math.log(1.0 + {e[0]} * {e[0]} + {eps})", math.log(1.0 + e[1] ** 2) + 1e-7
        elif form == 2:
            code, b = f"{e[0]} / (1.0 + {eps})", e[1]
        else:
            code, b = f"{e[0]} * (1.0 - {eps}) + {eps}", e[1] + 1e-15
        self.store_float(env, ctx, self.fresh("s"), (code, b))

    def x_del(self, env: Env, ctx: Ctx) -> None:
        """tmp = ...; s = ... tmp ...; del tmp"""
        tmp = self.fresh("tmp")
        form = self.rng.randrange(3)
        c = self.const()
        if form == 0:
            e = self.squash(self.fexpr(env, 1), LIMIT)
            self.emit(ctx, f"{tmp} = {e[0]}")
            use = (f"{tmp} * {c[0]}", e[1] * c[1])
        elif form == 1:
            a, b = self.squash(self.fexpr(env, 1), LIMIT), self.squash(self.fexpr(env, 1), LIMIT)
            self.emit(ctx, f"{tmp} = [{a[0]}, {b[0]}]")
            use = (f"sum({tmp}) * {c[0]}", (a[1] + b[1]) * c[1])
        else:
            shape = self.array_shape(env)
            a = self.asquash(self.aexpr(env, shape, 1), LIMIT)
            self.emit(ctx, f"{tmp} = {a[0]}")
            use = (f"np.sum({tmp} * {tmp}) * {c[0]}", a[1] ** 2 * math.prod(shape) * c[1])
        other = self.squash(self.fexpr(env, 1), LIMIT)
        self.store_float(env, ctx, self.fresh("s"), (f"{use[0]} + {other[0]}", use[1] + other[1]))
        self.emit(ctx, f"del {tmp}")
        self.feature("del")

    def x_import(self, env: Env, ctx: Ctx) -> None:
        """import math as m2 (and others) inside the function, used at once."""
        form = self.rng.randrange(4)
        a = self.fexpr(env, 1)
        if form == 0:
            self.emit(ctx, "import math as m2")
            code, b = f"m2.tanh({a[0]}) + m2.pi * 0.1", 1.0 + math.pi * 0.1
        elif form == 1:
            self.emit(ctx, "from math import cos, sin")
            c = self.fexpr(env, 1)
            code, b = f"sin({a[0]}) * cos({c[0]})", 1.0
        elif form == 2 and env.names(ARR):
            self.emit(ctx, "import numpy as np2")
            code, b = f"np2.sum(np2.tanh({self.pick(env.names(ARR))})) * 0.5", 0.5 * 6
        else:
            self.emit(ctx, "from numpy import tanh")
            code, b = f"tanh({a[0]})", 1.0
        self.store_float(env, ctx, self.fresh("s"), (code, b))
        self.feature("local_import")

    def x_local_class(self, env: Env, ctx: Ctx) -> None:
        """A class statement in the function, instantiated; its attributes (data) read in active arithmetic."""
        name = self.fresh("Cfg")
        obj = name.lower()
        scale = self.rng.choice(["0.5", "1.25", "-0.75", "2.0"])
        body = ctx.inner()
        self.emit(ctx, f"class {name}:")
        self.emit(body, f"scale = {scale}")
        self.emit(body, "order = 2")
        self.emit(body, "def __init__(self, k):")
        self.emit(body.inner(), "self.k = k")
        self.emit(body.inner(), f"self.tag = {name.lower()!r}")
        method = self.rng.random() < 0.4
        if method:
            self.emit(body, "def weight(self):")
            self.emit(body.inner(), "return self.k * 0.25")
        ints = env.names(INT, lambda t: t.bound <= 5 and t.lo >= -5)
        k, bk = (self.pick(ints), 5) if ints and self.rng.random() < 0.6 else (self.rng.choice(["2", "3"]), 3)
        self.emit(ctx, f"{obj} = {name}({k})")
        e = self.squash(self.fexpr(env, 1), 2.0)
        form = self.rng.randrange(4)
        if form == 0:
            code, b = f"{e[0]} * {obj}.scale + {obj}.k * 0.1", e[1] * abs(float(scale)) + bk * 0.1
        elif form == 1:
            code, b = f"{e[0]} * {name}.scale", e[1] * abs(float(scale))
        elif form == 2 and method:
            code, b = f"{obj}.weight() * {e[0]}", bk * 0.25 * e[1]
        else:
            code, b = f"{e[0]} ** {obj}.order * 0.5 + len({obj}.tag) * 0.01", e[1] ** 2 * 0.5 + 0.1
        self.store_float(env, ctx, self.fresh("s"), (code, b))
        self.feature("local_class")

    def x_state(self, env: Env, ctx: Ctx) -> None:
        """STATE.calls += 1, STATE.last = k: writes into a module-level object's attributes."""
        self.module_state.add("STATE")
        form = self.rng.randrange(4)
        if form == 0:
            self.emit(ctx, "STATE.calls += 1")
        elif form == 1:
            self.emit(ctx, "STATE.calls = STATE.calls + 1")
        else:
            self.emit(ctx, f"STATE.last = {self.inactive_value(env)}")
        self.feature("outside_state")
