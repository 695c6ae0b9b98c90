"""The programs `test_higher_order.py` differentiates: lambdas and nested defs reading their enclosing
scope, functions passed, returned, composed and kept in containers, recursion, functions as arguments,
`map`, `reduce`, `sorted`, comprehensions, closures in loops. Module-level functions, so chadpy reads their
source here.

Closures in loops read the loop variable when they run, in the iteration that made them: late binding is
what these programs test, not a slip (B023).
"""

# ruff: noqa: B023

from __future__ import annotations

import functools
import math

import numpy as np

# ====================================================================== lambdas and nested defs, enclosing scope


def ho_lambda_linear(x, a):
    g = lambda t: a * t
    return g(x)


def ho_lambda_scalar(x, y):
    g = lambda t: t * y + math.sin(t)
    return g(x) + g(x * y)


def ho_lambda_no_free_variables(x):
    sq = lambda t: t * t
    return sq(x) + sq(sq(x) - 1.0)


def ho_def_branch(x, y):
    def h(t):
        u = t * y
        if u > 0.0:
            return math.exp(-u)
        return u * u

    return h(x) + h(-x) * y


def ho_def_defaults_and_keywords(x, a):
    def f(t, scale=2.0):
        return scale * math.tanh(a * t)

    return f(x) + f(x, scale=a) + f(t=a, scale=x)


def ho_closure_reads_intermediates(x, y):
    s = x * y
    c = math.cos(s)
    g = lambda t: s * t + c
    return g(x) + g(g(y))


def ho_closure_shadowing(x, y):
    g = lambda x: x * y + 1.0  # the parameter x shadows the outer x
    return g(y) + x * g(x)


def ho_closure_array(v, w):
    f = lambda u: np.sum(np.tanh(u * w))
    return f(v) + f(v * v)


def ho_closure_matrix(W, b, x):
    def layer(h):
        return np.tanh(W @ h + b)

    return np.sum(layer(layer(x)) ** 2)


def ho_closure_list(xs, x):
    at = lambda i: xs[i] * x
    return at(0) + at(2) * at(-1)


def ho_closure_tuple(p, x):
    poly = lambda t: p[0] + p[1] * t + p[2] * t * t
    return poly(x) * poly(-x)


def ho_closure_dict(params, x):
    model = lambda t: params["w"] * t + params["b"]
    return model(x) ** 2 + model(1.0)


# ====================================================================== passing, returning and composing functions


def apply_twice(f, x):
    return f(f(x))


def apply_n(f, x, n):
    for _ in range(n):
        x = f(x)
    return x


def compose(f, g):
    return lambda t: f(g(t))


def make_affine(w, b):
    return lambda t: w * t + b


def make_poly(coeffs):
    def p(t):
        y = 0.0
        for c in coeffs:
            y = y * t + c
        return y

    return p


def apply_pair(fs, x):
    f, g = fs
    return f(x) * g(x)


def apply_ops(ops, x):
    return ops["f"](x) + ops["g"](x) * x


def ho_pass_lambda(x, a):
    return apply_twice(lambda t: a * math.sin(t), x)


def ho_pass_def(x, a, n):
    def step(t):
        return t - 0.1 * (t * t - a)

    return apply_n(step, x, n)


def ho_factory(w, b, x):
    f = make_affine(w, b)
    g = make_affine(b, w)
    return f(g(x)) * f(x)


def ho_factory_poly(coeffs, x):
    p = make_poly(coeffs)
    return p(x) + p(0.5 * x) ** 2


def ho_compose(x, a):
    h = compose(math.exp, lambda t: a * t)
    k = compose(h, h)
    return h(x) + k(x)


def ho_local_factory(x, y):
    def make(s):
        return lambda t: s * t + x

    f = make(y)
    g = make(x * y)
    return f(y) * g(x)


# ====================================================================== functions in tuples, lists and dicts


def ho_tuple_of_functions(x, a, b):
    fs = (lambda t: a * t, lambda t: t * t + b, math.sin)
    f, g, h = fs
    return f(x) + fs[1](g(x)) * h(x) + apply_pair((fs[0], fs[2]), x)


def ho_list_from_factory(cs, x):
    fs = [make_affine(c, x) for c in cs]  # one site: make_affine's lambda
    s = 0.0
    for f in fs:
        s = s + f(x) ** 2
    return s


def ho_list_default_index(w, x):
    fs = []
    for k in range(len(w)):
        fs.append(lambda y, k=k: y * w[k])
    return sum([f(x) ** 2 for f in fs])


def ho_list_default_value(cs, x):
    fs = []
    for c in cs:
        fs.append(lambda y, c=c: math.sin(c * y))
    return fs[0](x) + fs[-1](x) * fs[1](x)


def ho_list_comprehension_of_lambdas(cs, x):
    fs = [lambda y, c=c: c * y * y for c in cs]
    return sum([f(x) for f in fs])


def ho_dict_of_closures(x, a, b):
    ops = {"scale": lambda t: a * t, "shift": lambda t: t + b, "square": lambda t: t * t}
    return ops["square"](ops["scale"](ops["shift"](x)))


def ho_dict_to_user_function(x, a):
    ops = {"f": lambda t: a * t * t, "g": math.cos}
    return apply_ops(ops, x)


# ====================================================================== recursion and nesting


def ho_recursive_power(x, a, n):
    def power(y, k):
        return a if k == 0 else y * power(y, k - 1)

    return power(x, n) + power(a, 2)


def ho_recursive_horner(xs, x):
    def rest(i):
        return 0.0 if i == len(xs) else xs[i] + x * rest(i + 1)

    return rest(0)


def ho_nested_closure(x, y, z):
    def outer(u):
        def inner(t):
            return t * u + y * z

        return inner(x) * u + inner(u)

    return outer(y) + outer(z * x)


def ho_nested_returned(x, y, z):
    def adder(u):
        def add(t):
            return t + u * x

        return add

    f = adder(y)
    g = adder(z)
    return f(z) * g(x) + f(g(y))


def ho_three_levels(x, y):
    def a(p):
        def b(q):
            c = lambda r: r * p * q * x
            return c(y) + q

        return b(p * y)

    return a(x) + a(y)


# ====================================================================== functions as arguments


def integrate_midpoint(f, a, b, n):
    h = (b - a) / n
    s = 0.0
    for i in range(n):
        s = s + f(a + (i + 0.5) * h)
    return s * h


def integrate_trapezoid(f, a, b, n):
    h = (b - a) / n
    s = 0.5 * (f(a) + f(b))
    for i in range(1, n):
        s = s + f(a + i * h)
    return s * h


def integrate_map(f, a, b, n):
    h = (b - a) / n
    ts = [a + (i + 0.5) * h for i in range(n)]
    return h * sum(map(f, ts))


def weighted_integral(f, w, a, b, n):
    g = lambda t: f(t) * math.exp(-w * t)  # captures a function-valued parameter
    return integrate_midpoint(g, a, b, n)


def double_integral(f, a, b, n):
    """The integral of f(s * t) over a <= s <= t <= b."""
    inner = lambda t: integrate_midpoint(lambda s: f(s * t), a, t, n)
    return integrate_midpoint(inner, a, b, n)


def rk4(f, y, t0, t1, n):
    h = (t1 - t0) / n
    t = t0
    for _ in range(n):
        k1 = f(t, y)
        k2 = f(t + 0.5 * h, y + 0.5 * h * k1)
        k3 = f(t + 0.5 * h, y + 0.5 * h * k2)
        k4 = f(t + h, y + h * k3)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t = t + h
    return y


def newton(f, fprime, y, n):
    for _ in range(n):
        y = y - f(y) / fprime(y)
    return y


def fixed_point(g, y, n):
    for _ in range(n):
        y = g(y)
    return y


def gauss(t):
    return math.exp(-t * t)


def damped(t):
    return math.exp(-0.5 * t) * math.cos(3.0 * t)


def rational(t):
    return 1.0 / (1.0 + t * t)


def logistic(t, y):
    return y * (1.0 - y) + 0.1 * math.sin(t)


CUBIC = lambda t: t**3 - 2.0 * t  # a module-level lambda passed as a value


def ho_ode_closure(k, y0):
    rhs = lambda t, y: -k * y + math.sin(t)
    return rk4(rhs, y0, 0.0, 1.0, 10)


def ho_newton_cubic_root(c):
    """The root of y**3 + y = c."""
    f = lambda y: y**3 + y - c
    fp = lambda y: 3.0 * y * y + 1.0
    return newton(f, fp, 1.0, 20)


def ho_fixed_point(a):
    """The solution of y = 0.5 cos(y) + a."""
    return fixed_point(lambda y: 0.5 * math.cos(y) + a, 0.0, 60)


# ====================================================================== map, reduce, sorted, max, min, comprehensions


def ho_map_sum(xs, w):
    return sum(map(lambda v: math.tanh(w * v), xs))


def ho_map_list_index(xs, w):
    ys = list(map(lambda v: v * w + v * v, xs))
    return ys[0] * ys[-1] + ys[1]


def ho_map_for(xs, a):
    s = 0.0
    for y in map(lambda v: math.exp(a * v), xs):
        s = s + y * y
    return s


def ho_map_two_lists(xs, ys, w):
    return sum(map(lambda a, b: w * a * b + a, xs, ys))


def ho_map_module_function_and_primitive(xs):
    return sum(map(gauss, xs)) + sum(map(math.sin, xs)) * xs[0]


def ho_map_params(params, x):
    """map over a list of parameters: a sum of tanh units."""
    return sum(map(lambda p: p[0] * math.tanh(p[1] * x + p[2]), params))


def ho_map_params_def(params, x):
    def unit(p):
        w, b = p
        return math.tanh(w * x + b) ** 2

    return sum(map(unit, params))


def ho_reduce_lambda(xs, w):
    return functools.reduce(lambda acc, v: acc * w + v, xs, 0.0)


def ho_reduce_no_initial(xs, w):
    return functools.reduce(lambda a, b: a * b + w, xs)


def ho_sorted_key(ps):
    s = sorted(ps, key=lambda p: p[0])
    total = 0.0
    for i, (k, v) in enumerate(s):
        total = total + (i + 1) * v * k
    return total


def ho_sorted_reverse(xs, c):
    s = sorted(xs, key=lambda v: (v - c) ** 2, reverse=True)  # c only orders: its gradient is 0
    return s[0] * 3.0 + s[1] * 2.0 + s[-1]


def ho_sorted_weights(xs, w):
    s = sorted(xs, key=lambda v: abs(v))
    return sum([wi * v * v for wi, v in zip(w, s)])


def ho_max_key(ps, x):
    best = max(ps, key=lambda p: p[0] * x)
    return best[1] * x + best[0] ** 2


def ho_min_key(xs, c):
    nearest = min(xs, key=lambda v: abs(v - c))
    return nearest * c + nearest**2


def ho_comprehension_closure(xs, a, b):
    f = lambda v: a * v + b
    return sum([f(v) ** 2 for v in xs if f(v) > 0.0])


# ====================================================================== closures in loops


def ho_closure_in_loop(w, x, n):
    total = 0.0
    for k in range(n):
        g = lambda y: y * w[k]
        total += math.sin(g(x))
    return total


def ho_def_in_loop(xs, x):
    s = 0.0
    for v in xs:

        def term(t):
            return math.sin(t * v) * v

        s = s + term(x)
    return s


def ho_closure_reads_carried(xs, x):
    # term reads s, which is reassigned after the call; term is never called again
    s = 0.5
    for v in xs:
        term = lambda t: math.sin(t * v) + 0.1 * s
        s = s + term(x)
    return s


def ho_closure_array_loop(X, w):
    s = 0.0
    for row in X:
        score = lambda u: np.tanh(row @ u)
        s = s + score(w) ** 2
    return s


def ho_factory_in_loop(ws, b, x):
    y = x
    for w in ws:
        f = make_affine(w, b)
        y = math.tanh(f(y))
    return y


def ho_closure_outside_loop(xs, a):
    g = lambda t: a * t * t
    s = 0.0
    for v in xs:
        s = s + g(v)
    return s


def ho_closure_in_while(x, c):
    y = x
    i = 0
    while i < 5:
        step = lambda t: t - 0.2 * (t * t - c)
        y = step(y)
        i += 1
    return y


def ho_reassigned_after_last_call(x):
    # the closure's variable is reassigned only after its last call: no late binding
    a = x * 2.0
    g = lambda y: y * a
    s = g(x)
    a = a + 1.0
    return s + a * x
