"""The generator's state and its utilities: fresh names, weighted choices, bounds."""

from __future__ import annotations

import itertools
import random

import numpy as np

from .core import (
    ARR,
    CONSTS,
    DICT,
    DIFFERENTIABLE,
    FLOAT,
    LIST,
    REC,
    TUPLE,
    ClassInfo,
    Ctx,
    E,
    Env,
    Helper,
    Program,
    normalize,
)


class Base:
    """The generator's state and its utilities: fresh names, weighted choices, bounds."""

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
        # issue 37's statements no derivative flows through (`extras`): a stream of their own, so that a program
        # without any is the same as before they existed; the module-level state they update
        self.x_rng = random.Random(seed * 2147483647 + 37)
        self.module_state: set[str] = set()  # "CALLS" (f says `global CALLS`), "LOG", "STATE"

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
        if "CALLS" in self.module_state:  # f counts its calls
            self.lines.insert(1, "    global CALLS")
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
        state = [f"{n} = {v}" for n, v in (("CALLS", "0"), ("LOG", "[]")) if n in self.module_state]
        if state:
            parts.append("\n".join(state) + "\n")
        if "STATE" in self.module_state:
            lines = ["class State:", "    def __init__(self):", "        self.calls = 0", "        self.last = None"]
            parts.append("\n" + normalize("\n".join(lines)) + "\n\nSTATE = State()\n")
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
