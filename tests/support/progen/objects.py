"""Classes and records: dataclasses, namedtuples, plain classes, subclasses, their methods (`o_*`)."""

from __future__ import annotations

from .base import Base
from .core import (
    ATTR,
    CTOR_IN,
    FLOAT,
    FN_IN,
    FN_OUT,
    REC,
    Callable,
    ClassInfo,
    Ctx,
    E,
    Env,
    Helper,
    Ty,
    _replace,
)


class Objects(Base):
    """Classes and records: dataclasses, namedtuples, plain classes, subclasses, their methods (`o_*`)."""

    def records(self, env: Env, pred: Callable[[ClassInfo], bool] | None = None) -> list[str]:
        """The records in scope whose class satisfies pred."""
        return [n for n in env.names(REC) if pred is None or pred(self.class_info(env.vars[n].cls))]

    def class_info(self, name: str) -> ClassInfo:
        return next(c for c in self.classes if c.name == name)

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
        return ClassInfo(name, "o_dataclass", fields, 2, fields, methods, frozen=frozen)

    def o_namedtuple(self, name: str) -> ClassInfo:
        """Pt = namedtuple('Pt', ...), sometimes with a default."""
        self.imports.add("namedtuple")
        if self.rng.random() < 0.3:
            self.emit(Ctx("", 0), f"{name} = namedtuple({name!r}, 'a b c', defaults=({self.const()[0]},))")
            self.feature("namedtuple_default")
            return ClassInfo(name, "o_namedtuple", ("a", "b", "c"), 2, ("a", "b", "c"), frozen=True)
        self.emit(Ctx("", 0), f"{name} = namedtuple({name!r}, ['a', 'b'])")
        return ClassInfo(name, "o_namedtuple", ("a", "b"), 2, ("a", "b"), frozen=True)

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
