"""List expressions: literals, slices, comprehensions, `sorted`, `map` (`l_*`)."""

from __future__ import annotations

from .base import Base
from .core import ARR, DICT, FLOAT, FN, FN_IN, INT, LIMIT, LIST, E, Env, Ty, _replace


class Lists(Base):
    """List expressions: literals, slices, comprehensions, `sorted`, `map` (`l_*`)."""

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
