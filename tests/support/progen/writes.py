"""Arrays and lists unpacked into names, and writes into local containers and records (issue 37, `x_*`):
`a, b, c = theta`, `r0, r1 = M`, `lst[i] = v`, `d["k"] = v`, `ob.a = v`, an element's element `xs[i][j] = v`,
`d["k"][j] += v`, `M[i][j] = v`, each read back.

Only the forms chadpy supports. A list or dict is written only by the statement that builds it (then it is the
function's own, under one name); a record only if the function made it (`Ty.fresh`; not an argument) and its class
is not frozen. An element of an element (`x_nested_store`) is written only where nothing else holds that element:
in a list of new arrays or new lists (a comprehension, a display or appends of new objects: never `[[0.0] * m] * n`,
`[a, a]`, a caller's list, a matrix's rows), a dict of them, or a matrix the function made (`Ty.fresh`, reassignable
here); its rows all of one kind (a list holding arrays and lists is refused), indices in range (constants, ints in
scope, loop variables), and no row read out of it under a name before the writes (only after them: chadpy refuses a
write to an element something read earlier still holds)."""

from __future__ import annotations

import re

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

    # ------------------------------------------------------------------ an element of an element (`x_nested_store`)

    def x_nested_store(self, env: Env, ctx: Ctx) -> None:
        """`c[i][j] = v`, `c[i][j] += v` on a list of new arrays or of new lists (a comprehension, a display, appends),
        `d["k"][j] = v` on a dict of them, `M[i][j] = v` on a matrix the function made; constant indices or a loop's,
        in range; read back (a row, an element, all of it). The container is the statement's own: nothing else holds
        its elements (no name, no other container), as chadpy requires."""
        kind = self.choose([("arrays", 1.0), ("lists", 1.0), ("dict", 0.7), ("matrix", 0.8)])
        self.feature("nested_store")
        self.feature(f"nested_{kind}")
        if kind == "matrix":
            self.nested_matrix(env, ctx)
            return
        c, rows, bound = self.nested_dict(env, ctx) if kind == "dict" else self.nested_list(env, ctx, kind == "arrays")
        written: list[tuple[str, str]] = []  # (outer, inner) indices of the writes
        for _ in range(self.rng.choice([1, 1, 2, 3])):
            bound = self.nested_write(env, ctx, c, rows, bound, written, kind != "dict")
        self.nested_read(env, ctx, c, rows, bound, written, kind != "dict")

    def nested_element(self, env: Env, m: int, arr: bool, k: str = "") -> tuple[str, float]:
        """A new array or list of length m (a new object each time it is evaluated); k: a comprehension's int
        variable (< 4) it may read."""
        if arr:
            form = self.rng.choice(["zeros", "zeros", "ones", "expr", "literal"] + ["index"] * bool(k))
            if form == "zeros":
                return f"np.zeros({m})", 0.0
            if form == "ones":
                c = self.const()
                return f"np.ones({m}) * {c[0]}", c[1]
            if form == "index":
                return f"np.ones({m}) * ({k} * 0.5)", 1.5
            if form == "literal":
                parts = [self.squash(self.fexpr(env, 2), LIMIT) for _ in range(m)]
                return f"np.array([{', '.join(p[0] for p in parts)}])", max(p[1] for p in parts)
            e = self.asquash(self.aexpr(env, (m,), 1), LIMIT)
            return (e[0] if e[2] else f"({e[0]}) * 1.0"), e[1]  # a view or a name: copied, a new array
        sources = env.names(LIST, lambda t: t.length == t.maxlen == m)
        form = self.rng.choice(["zeros", "zeros", "values"] + ["copy"] * bool(sources) + ["index"] * bool(k))
        if form == "zeros":
            return f"[0.0] * {m}", 0.0
        if form == "index":
            return f"[{k} * 0.5] * {m}", 1.5
        if form == "copy":
            xs = self.pick(sources)
            t = env.vars[xs]
            c = self.const()
            return self.rng.choice([(f"list({xs})", t.bound), (f"[t * {c[0]} for t in {xs}]", t.bound * c[1])])
        parts = [self.squash(self.fexpr(env, 2), LIMIT) for _ in range(m)]
        return f"[{', '.join(p[0] for p in parts)}]", max(p[1] for p in parts)

    def loop_var(self, env: Env) -> str:
        return next((v for v in ("i", "j", "k") if v not in env.vars), None) or self.fresh("i")

    def nested_list(self, env: Env, ctx: Ctx, arr: bool) -> tuple[str, list[tuple[str, int, bool]], float]:
        """c = a list of n new arrays (arr) or lists of one length m: a comprehension, a display, appends (in a loop
        or one by one). Its rows (index, length, an array?) and the bound of their elements."""
        c = self.fresh("rows" if arr else "lol")
        n, m = self.rng.choice([2, 3, 3]), self.rng.choice([2, 3, 4])
        form = self.rng.choice(["comp", "comp", "display", "append_loop", "append"])
        bound = 0.0
        matrices = env.names(ARR, lambda t: len(t.shape) == 2 and t.shape[0] in (2, 3) and t.shape[1] > 1)
        if form == "comp" and arr and matrices and self.rng.random() < 0.25:  # a new array from each of M's rows
            name = self.pick(matrices)
            t = env.vars[name]
            n, m = t.shape
            e = self.squash(self.fexpr(env, 1), 1.0)
            r = "r" if "r" not in env.vars else self.fresh("r")
            code, bound = self.rng.choice([(f"{r} * {e[0]}", t.bound * e[1]), (f"np.tanh({r}) + {e[0]}", 1 + e[1])])
            self.emit(ctx, f"{c} = [{code} for {r} in {name}]")
        elif form == "comp":
            k = self.rng.choice(["_", self.loop_var(env)])
            inner = env.copy()
            if k != "_":
                inner.add(k, Ty(INT, n - 1, lo=0))
            code, bound = self.nested_element(inner, m, arr, "" if k == "_" else k)
            self.emit(ctx, f"{c} = [{code} for {k} in range({n})]")
        elif form == "display":
            parts = [self.nested_element(env, m, arr) for _ in range(n)]
            self.emit(ctx, f"{c} = [{', '.join(p[0] for p in parts)}]")
            bound = max(p[1] for p in parts)
        elif form == "append_loop":
            code, bound = self.nested_element(env, m, arr)
            self.emit(ctx, f"{c} = []")
            self.emit(ctx, f"for _ in range({n}):")
            self.emit(ctx.inner(), f"{c}.append({code})")
            self.feature("nested_append")
        else:
            self.emit(ctx, f"{c} = []")
            for _ in range(n):
                code, b = self.nested_element(env, m, arr)
                self.emit(ctx, f"{c}.append({code})")
                bound = max(bound, b)
            self.feature("nested_append")
        return c, [(str(i), m, arr) for i in range(n)], bound

    def nested_dict(self, env: Env, ctx: Ctx) -> tuple[str, list[tuple[str, int, bool]], float]:
        """d = a dict of new lists and arrays (a display, or {} and a store for each key)."""
        d = self.fresh("dct")
        keys = self.rng.sample(KEYS, self.rng.randint(1, 3))
        rows = [(repr(k), self.rng.choice([2, 3]), self.rng.random() < 0.4) for k in keys]
        parts = [self.nested_element(env, m, arr) for _, m, arr in rows]
        if self.rng.random() < 0.6:
            self.emit(ctx, f"{d} = {{{', '.join(f'{k}: {p[0]}' for (k, _, _), p in zip(rows, parts))}}}")
        else:
            self.emit(ctx, f"{d} = {{}}")
            for (k, _, _), p in zip(rows, parts):
                self.emit(ctx, f"{d}[{k}] = {p[0]}")
        return d, rows, max(p[1] for p in parts)

    def nested_write(
        self,
        env: Env,
        ctx: Ctx,
        c: str,
        rows: list[tuple[str, int, bool]],
        bound: float,
        written: list[tuple[str, str]],
        listed: bool,
    ) -> float:
        """One write into c's elements' elements (rows: c's indices or keys, the lengths; listed: c a list or a
        matrix, its rows all of one length, indexed by ints): one element, a loop over the rows or along a row
        (or both), or a recurrence down the rows; the elements' new bound."""
        n = len(rows)
        forms = ["one", "one", "along"] + (["down", "both"] + ["recur"] * (n > 1) if listed else [])
        form = self.rng.choice(forms)
        if form == "one":
            row, m, _ = self.rng.choice(rows)
            i = (self.index(env, n) if self.rng.random() < 0.5 else row) if listed else row
            j = self.index(env, m)
            written.append((i, j))
            return self.write_element(ctx, f"{c}[{i}][{j}]", bound, env)
        self.feature("nested_loop")
        inner, ictx = env.copy(), ctx.inner()
        if form == "along":  # c[i][j] for j in range(m)
            row, m, _ = self.rng.choice(rows)
            i = self.index(env, n) if listed and self.rng.random() < 0.5 else row
            j = self.loop_var(env)
            inner.add(j, Ty(INT, m - 1, lo=0))
            self.emit(ctx, f"for {j} in range({m}):")
            written.append((i, "0"))
            return self.write_element(ictx, f"{c}[{i}][{j}]", bound, inner)
        m = rows[0][1]
        i = self.loop_var(env)
        inner.add(i, Ty(INT, n - 1, lo=0))
        if form == "recur":  # c[i + 1][j] from c[i][j]: reads back what the loop wrote
            self.feature("nested_recur")
            j = self.index(env, m)  # not the loop's i: read back after the loop
            e = self.squash(self.fexpr(inner, 1), LIMIT / 2)
            self.emit(ctx, f"for {i} in range({n - 1}):")
            self.emit(ictx, f"{c}[{i} + 1][{j}] = {c}[{i}][{j}] * 0.5 + {e[0]}")
            written.append((str(n - 1), j))
            return max(bound, 2 * e[1])
        self.emit(ctx, f"for {i} in range({n}):")
        if form == "down":  # c[i][j] for i in range(n)
            j = self.index(inner, m)
            written.append(("0", re.sub(rf"\b{i}\b", "0", j)))  # the element written first
            return self.write_element(ictx, f"{c}[{i}][{j}]", bound, inner)
        j = self.loop_var(inner)  # both: every element
        inner.add(j, Ty(INT, m - 1, lo=0))
        self.emit(ictx, f"for {j} in range({m}):")
        written.append(("0", "0"))
        return self.write_element(ictx.inner(), f"{c}[{i}][{j}]", bound, inner)

    def nested_read(
        self,
        env: Env,
        ctx: Ctx,
        c: str,
        rows: list[tuple[str, int, bool]],
        bound: float,
        written: list[tuple[str, str]],
        listed: bool,
    ) -> None:
        """Read c back: a written element or its row, then maybe another row or all of it; maybe a row kept under a
        name (read after the writes: chadpy allows it)."""
        by_index = {r: (m, arr) for r, m, arr in rows}
        i, j = self.rng.choice(written)
        m, arr = by_index.get(i, (rows[0][1], rows[0][2]))  # an int expression: a list's rows are all alike
        reduce = "np.sum" if arr else "sum"
        terms = [self.rng.choice([(f"{c}[{i}][{j}]", bound), (f"{reduce}({c}[{i}])", m * bound)])]
        if self.rng.random() < 0.5:
            r, m2, arr2 = self.rng.choice(rows)
            if listed and self.rng.random() < 0.5:
                whole = "np.sum(r)" if arr2 else "sum(r)"
                terms.append((f"sum({whole} for r in {c})", len(rows) * m2 * bound))
            elif arr and arr2 and m2 == m and r != i:
                terms.append((f"np.dot({c}[{i}], {c}[{r}])", m * bound * bound))
            else:
                terms.append((f"{'np.sum' if arr2 else 'sum'}({c}[{r}]) * 0.5", m2 * bound * 0.5))
        e = self.fexpr(env, 1)
        code = " + ".join(t[0] for t in terms)
        self.store_float(env, ctx, self.fresh("s"), (f"({code}) * {e[0]}", sum(t[1] for t in terms) * e[1]))
        if self.rng.random() < 0.3:  # a row under a name: read later by the rest of the function
            r, m, arr = self.rng.choice(rows)
            name = self.fresh("row")
            self.emit(ctx, f"{name} = {c}[{r}]")
            env.add(name, Ty(ARR, bound, shape=(m,), fresh=False) if arr else Ty(LIST, bound, length=m, maxlen=m))
            self.feature("nested_row_read")

    def nested_matrix(self, env: Env, ctx: Ctx) -> None:
        """M[i][j] = v, M[i][j] += v ... on a matrix the function made (an existing one, or a new one), read back."""
        owned = env.reassignable(ARR, lambda t: t.fresh and len(t.shape) == 2)
        if owned and self.rng.random() < 0.4:
            name = self.pick(owned)
            t = env.vars[name]
        else:
            name = self.fresh("mat")
            shape = (self.rng.choice([2, 3]), self.rng.choice([2, 3, 4]))
            if self.rng.random() < 0.5:
                e = self.a_constructor(env, shape, 2)
            else:
                e = self.asquash(self.aexpr(env, shape, 1), LIMIT)
                if not e[2]:
                    e = (f"({e[0]} * 1.0)", e[1], True)
            e = self.asquash(e, LIMIT)
            self.emit(ctx, f"{name} = {e[0]}")
            t = Ty(ARR, e[1], shape=shape, fresh=True)
            env.add(name, t)
        n, m = t.shape
        rows = [(str(i), m, True) for i in range(n)]
        written: list[tuple[str, str]] = []
        bound = t.bound
        for _ in range(self.rng.choice([1, 1, 2])):
            bound = self.nested_write(env, ctx, name, rows, bound, written, True)
        env.vars[name] = _replace(t, bound=bound)
        i, j = self.rng.choice(written)
        e = self.fexpr(env, 1)
        code, b = self.rng.choice(
            [(f"{name}[{i}][{j}]", bound), (f"{name}[{i}, {j}]", bound), (f"np.sum({name}[{i}])", m * bound)]
        )
        self.store_float(env, ctx, self.fresh("s"), (f"{code} * {e[0]}", b * e[1]))
