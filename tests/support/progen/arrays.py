"""Array expressions: literals, constructors, broadcasting, NumPy functions and reductions (`a_*`)."""

from __future__ import annotations

import math

import numpy as np

from .base import Base
from .core import ARR, FLOAT, IARR, NP_SPECIAL, E, Env, Ty


class Arrays(Base):
    """Array expressions: literals, constructors, broadcasting, NumPy functions and reductions (`a_*`)."""

    def asquash(self, e: E, limit: float = 1.0) -> E:
        code, b = e[0], e[1]
        if b <= limit:
            return e
        fn = self.rng.choice(["np.tanh", "np.sin", "np.tanh"])
        return f"{fn}({code})", 1.0, True

    def any_array(self, env: Env, depth: int) -> tuple[str, Ty]:
        """An existing array or a small array expression, with its type."""
        if depth < 1 and self.rng.random() < 0.35:
            shape = self.rng.choice([(3,), (2,), (3, 2)] + [env.vars[n].shape for n in env.names(ARR)])
            e = self.aexpr(env, shape, depth + 1)
            return e[0], Ty(ARR, e[1], shape)
        name = self.pick(env.names(ARR))
        return name, env.vars[name]

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

    def array_shape(self, env: Env) -> tuple[int, ...]:
        shapes = [(3,), (2,), (3, 2), (3,), (2, 3), (3, 1), (1, 2)]
        shapes += [env.vars[n].shape for n in env.names(ARR)] * 2
        return self.rng.choice(shapes)
