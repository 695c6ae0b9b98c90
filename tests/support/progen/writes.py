"""Arrays and lists unpacked into names, and writes into local containers and records (issue 37, `x_*`):
`a, b, c = theta`, `r0, r1 = M`, `lst[i] = v`, `d["k"] = v`, `ob.a = v`, each read back.

Only the forms chadpy supports: a write into an element of an element (`xs[i][j] = v`, `d["k"][0] = v`) is
refused (`assigning to an element of an element ... is not supported`), so the generator makes none. A list or
dict is written only by the statement that builds it (then it is the function's own, under one name); a record
only if the function made it (`Ty.fresh`; not an argument) and its class is not frozen."""

from __future__ import annotations

from .base import Base
from .core import ARR, ATTR, CTOR_IN, DICT, FLOAT, INT, KEYS, LIMIT, LIST, REC, Ctx, Env, Ty, _replace


class Writes(Base):
    """Arrays and lists unpacked into names, writes into local containers and records (issue 37, `x_*`)."""

    def x_unpack(self, env: Env, ctx: Ctx) -> None:
        """a, b, c = theta (a 1-D array), r0, r1 = M (a matrix's rows), a, b = xs (a list of known length)."""
        vectors = env.names(ARR, lambda t: len(t.shape) == 1 and t.shape[0] in (2, 3))
        matrices = env.names(ARR, lambda t: len(t.shape) == 2 and t.shape[0] in (2, 3))
        lists = env.names(LIST, lambda t: 2 <= t.length == t.maxlen <= 4)
        kind = self.choose([("vector", 2.0 * bool(vectors)), ("matrix", 1.5 * bool(matrices)), ("list", bool(lists))])
        source = self.pick({"vector": vectors, "matrix": matrices, "list": lists}[kind])
        t = env.vars[source]
        n = t.length if kind == "list" else t.shape[0]
        names = [self.fresh("row" if kind == "matrix" else "s") for _ in range(n)]
        self.emit(ctx, f"{', '.join(names)} = {source}")
        for name in names:
            if kind == "matrix":  # rows: views of the matrix, never written through
                env.add(name, Ty(ARR, t.bound, shape=t.shape[1:], fresh=False))
            else:
                env.add(name, Ty(FLOAT, t.bound))
        if kind == "matrix":  # nor the matrix while they may be read: chadpy refuses that write (a limitation)
            env.vars[source] = _replace(t, fresh=False)
        self.feature({"vector": "unpack_array", "matrix": "unpack_rows", "list": "unpack_list"}[kind])

    def write_element(self, ctx: Ctx, target: str, bound: float, env: Env) -> float:
        """`target = e`, `target += e`, `target *= e` ... (an element of a container whose elements are bounded
        by bound); the container's new bound (squashed again if it grew past LIMIT)."""
        op = self.rng.choice(["=", "=", "+=", "-=", "*="])
        if op == "=":
            e = self.squash(self.fexpr(env, 1), LIMIT)
            self.emit(ctx, f"{target} = {e[0]}")
            return max(bound, e[1])
        if op == "*=":
            e = self.squash(self.fexpr(env, 1), 1.0)
            self.emit(ctx, f"{target} *= {e[0]}")
            return bound
        e = self.squash(self.fexpr(env, 1), 2.0)
        self.emit(ctx, f"{target} {op} {e[0]}")
        if bound + e[1] > LIMIT:
            self.emit(ctx, f"{target} = math.tanh({target})")
            return max(bound, 1.0)
        return bound + e[1]

    def x_list_store(self, env: Env, ctx: Ctx) -> None:
        """lst = [...] (or a copy of a list, or [0.0] * n filled by a loop); lst[i] = v, lst[i] += v."""
        lst = self.fresh("lst")
        form = self.rng.randrange(3)
        sources = env.names(LIST, lambda t: t.length >= 1)
        if form == 2 and sources:
            xs = self.pick(sources)
            t = env.vars[xs]
            c = self.const()
            code, bound = self.rng.choice([(f"list({xs})", t.bound), (f"[t * {c[0]} for t in {xs}]", t.bound * c[1])])
            self.emit(ctx, f"{lst} = {code}")
            length, maxlen = t.length, t.maxlen
        elif form == 1:
            n = self.rng.choice([2, 3, 4])
            self.emit(ctx, f"{lst} = [0.0] * {n}")
            i = next((v for v in ("i", "j", "k") if v not in env.vars), None) or self.fresh("i")
            inner = env.copy()
            inner.add(i, Ty(INT, n - 1, lo=0))
            e = self.squash(self.fexpr(inner, 1), LIMIT)
            self.emit(ctx, f"for {i} in range({n}):")
            self.emit(ctx.inner(), f"{lst}[{i}] = {e[0]}")
            length = maxlen = n
            bound = e[1]
            self.feature("list_fill")
        else:
            n = self.rng.choice([2, 3, 3, 4])
            parts = [self.squash(self.fexpr(env, 1), LIMIT) for _ in range(n)]
            self.emit(ctx, f"{lst} = [{', '.join(p[0] for p in parts)}]")
            length = maxlen = n
            bound = max(p[1] for p in parts)
        for _ in range(self.rng.choice([1, 1, 2])):
            k = self.index(env, length) if length == maxlen else str(self.rng.randrange(-length, length))
            bound = self.write_element(ctx, f"{lst}[{k}]", bound, env)
        env.add(lst, Ty(LIST, bound, length=length, maxlen=maxlen))
        if self.rng.random() < 0.5:
            e = self.fexpr(env, 1)
            self.store_float(env, ctx, self.fresh("s"), (f"{lst}[{self.rng.randrange(length)}] * {e[0]}", bound * e[1]))
        self.feature("list_store")

    def x_dict_store(self, env: Env, ctx: Ctx) -> None:
        """d = {...} (or {}, or a copy of a dict); d["k"] = v for a new key and an old one, maybe `del d["k"]`;
        read back."""
        d = self.fresh("dct")
        keys = list(self.rng.sample(KEYS, self.rng.randint(2, 4)))
        form = self.rng.randrange(3)
        dicts = env.names(DICT)
        if form == 2 and dicts:
            src = self.pick(dicts)
            t = env.vars[src]
            self.emit(ctx, f"{d} = dict({src})")
            have, bound = list(t.keys), t.bound
        elif form == 1:
            self.emit(ctx, f"{d} = {{}}")
            have, bound = [], 0.0
        else:
            e = self.squash(self.fexpr(env, 1), LIMIT)
            self.emit(ctx, f"{d} = {{{keys[0]!r}: {e[0]}}}")
            have, bound = [keys[0]], e[1]
        new = [k for k in keys if k not in have][: self.rng.choice([1, 2])] or ["zz"]
        for k in new:  # new keys
            e = self.squash(self.fexpr(env, 1), LIMIT)
            self.emit(ctx, f"{d}[{k!r}] = {e[0]}")
            have.append(k)
            bound = max(bound, e[1])
        if self.rng.random() < 0.6:  # a key it has
            bound = self.write_element(ctx, f"{d}[{self.rng.choice(have)!r}]", bound, env)
        if len(have) > 1 and self.rng.random() < 0.2:
            gone = self.rng.choice(have)
            self.emit(ctx, f"del {d}[{gone!r}]")
            have.remove(gone)
            self.feature("dict_del")
        env.add(d, Ty(DICT, bound, keys=tuple(have)))
        if self.rng.random() < 0.6:
            a, b = self.rng.choice(have), self.rng.choice(have)
            self.store_float(env, ctx, self.fresh("s"), (f"{d}[{a!r}] * 0.5 + {d}[{b!r}]", bound * 1.5))
        self.feature("dict_store")

    def x_attr_store(self, env: Env, ctx: Ctx) -> None:
        """ob.a = v, ob.b *= v on a record the function made (a new one if there is none), read back."""
        writable = [n for n in env.names(REC) if env.vars[n].fresh and not self.class_info(env.vars[n].cls).frozen]
        if writable and self.rng.random() < 0.8:
            ob = self.pick(writable)
            c = self.class_info(env.vars[ob].cls)
        else:
            mutable = [c for c in self.classes if not c.frozen]
            c = self.rng.choice(mutable) if mutable and self.rng.random() < 0.7 else self.some_class(("o_plain",))
            ob = self.fresh("ob")
            self.emit(ctx, f"{ob} = {self.construct(env, c)}")
            env.add(ob, Ty(REC, cls=c.name))
        for _ in range(self.rng.choice([1, 1, 2])):
            field = self.rng.choice(c.fields)
            form = self.rng.randrange(3)
            if form == 0:
                self.emit(ctx, f"{ob}.{field} = {self.squash(self.fexpr(env, 1), ATTR)[0]}")
            elif form == 1:
                self.emit(ctx, f"{ob}.{field} *= {self.squash(self.fexpr(env, 1), 1.0)[0]}")
            else:
                e = self.squash(self.fexpr(env, 1), ATTR * 0.5)
                self.emit(ctx, f"{ob}.{field} = {ob}.{field} * 0.5 + {e[0]}")
        self.feature("attr_store")
        if self.rng.random() < 0.5:
            e = self.squash(self.fexpr(env, 1), CTOR_IN)
            read = self.member_call(ob, c, env, 1, ("methods", "props", "callable")) if c.methods else None
            code = f"{ob}.{self.rng.choice(c.fields)} * {e[0]}" if read is None else read[0]
            self.store_float(env, ctx, self.fresh("s"), (code, ATTR * CTOR_IN if read is None else read[1]))
