"""The programs `test_gradients.py` differentiates: operators, `math` functions and builtins, control flow,
tuples, calls of user functions, constants and statements, and a few larger examples. Module-level functions,
so chadpy reads their source here; `test_gradients` rebinds the constants to check the cache follows them."""

from __future__ import annotations

import math
import math as m
from math import cos as cosine
from math import sin

import chadpy as chad

SCALE = 2.5
OFFSET = -0.75
PAIR = (1.5, -2.0)
EXPONENT = 3


# ====================================================================== operators


def op_add(x, y):
    return x + y


def op_sub(x, y):
    return x - y


def op_mul(x, y):
    return x * y


def op_div(x, y):
    return x / y


def op_pow(x, y):
    return x**y


def op_pow_consts(x):
    return x**3 + x**2 + x**1 + x**0 + x**-2 + x**0.5 + x**EXPONENT


def op_floordiv(x, y):
    return (x // y) * x + y


def op_mod(x, y):
    return x % y


def op_unary(x):
    return -x * +x - (-x)


def op_int_constants(x):
    return 3 * x + 2 // 1 - x / 4 + 7 % 4


# ====================================================================== math functions


def m_sin(x):
    return math.sin(x) * x


def m_cos(x):
    return math.cos(2.0 * x)


def m_tan(x):
    return math.tan(x)


def m_asin(x):
    return math.asin(x)


def m_acos(x):
    return math.acos(x) * x


def m_atan(x):
    return math.atan(x * x - 1.0)


def m_atan2(y, x):
    return math.atan2(y, x)


def m_sinh(x):
    return math.sinh(x)


def m_cosh(x):
    return math.cosh(x)


def m_tanh(x):
    return math.tanh(x)


def m_exp(x):
    return math.exp(x)


def m_expm1(x):
    return math.expm1(x)


def m_log(x):
    return math.log(x)


def m_log_base(x, b):
    return math.log(x, b)


def m_log1p(x):
    return math.log1p(x)


def m_log2(x):
    return math.log2(x)


def m_log10(x):
    return math.log10(x)


def m_sqrt(x):
    return math.sqrt(x)


def m_pow(x, y):
    return math.pow(x, y)


def m_hypot2(x, y):
    return math.hypot(x, y)


def m_hypot3(x, y, z):
    return math.hypot(x, y, z)


def m_fabs(x):
    return math.fabs(x) * x


def m_erf(x):
    return math.erf(x)


# ====================================================================== builtins


def b_abs(x, y):
    return abs(x) * y


def b_min3(x, y, z):
    return min(x, y, z)


def b_max3(x, y, z):
    return max(x, y, z) * 2.0


def b_minmax2(x, y):
    return max(x, y) - min(y, x)


def b_relu(x):
    return max(x, 0) + max(0.0, x) * 2.0 + min(x, 0) * 3.0


def b_pow(x, y):
    return pow(x, y)


def b_discrete(x, n):
    return float(n) * x + int(x) + round(x) + round(x, 1)


def b_float_passthrough(x):
    return float(x) * float(x)


def b_int_arg(x, n):
    return x**n + n


# ====================================================================== control flow


def cf_if_else(x, y):
    if x > 1.0:
        z = x * y
    else:
        z = x + y
    return z * z


def cf_elif(x):
    if x < -1.0:
        r = -x * x
    elif x < 1.0:
        r = x * 3.0
    else:
        r = math.sqrt(x)
    return r + x


def cf_early_return(x, y):
    if x < 0.0:
        return y * y
    z = x * y
    return z + x


def cf_nested_partial(x, y):
    if x > 0.0:
        if y > 0.0:
            return x * y
        z = x + y
    else:
        z = x - y
    return z * z


def cf_if_no_else(x, y):
    z = y
    if x > 0.5:
        z = z * x
        w = 2.0
    else:
        w = 3.0
    return z * w + x


def cf_nested_join(x, y):
    if x > 0.0:
        if y > 0.0:
            r = x * y
        else:
            r = x - y
    else:
        r = y
    return r * 2.0


def cf_elif_returns(x):
    if x < 0.0:
        return -x
    elif x < 1.0:
        return x * x
    elif x < 2.0:
        return 2.0 * x - 1.0
    return 3.0


def cf_dead_case_inactive_result(x):
    y = x * 2.0
    w = math.sin(y) if x > 0.0 else 1.0
    if x > 1.0:
        v = math.cos(y)
    else:
        v = 2.0
    t = (w, v * 2.0)  # noqa: F841 (dead on purpose)
    return float(int(x))


def cf_dead_case_in_returning_branch(x, y):
    z = x * y
    if x > 0.0:
        w = math.sin(z) if y > 0.0 else 1.0  # noqa: F841 (dead on purpose)
        return 1.0
    return z


def cf_ifexp(x, y):
    w = x * y if x > y else x - y
    return w * w + (1.0 if y > 0.0 else 2.0) * y


def cf_and_or(x, y):
    return (x > 1.0 and x * y) or y * y


def cf_and_or_operands(x, y):
    a = x and y
    b = x or y
    return a * 2.0 + b * 3.0


def cf_chained(x, y):
    if 0.0 < x < 1.0 <= y:
        return x * y
    return x + y


def cf_not(x):
    if not x > 0.5:
        return x * x
    return 1.0 / x


def cf_discrete_tests(x, n, mode):
    if n == 0 or mode is None:
        return x
    if n != 1 and mode in ("a", "b"):
        return x * x
    return -x


# ====================================================================== tuples


def t_tuple_in(p, s):
    a, b = p
    return a * b + s * p[-1] + p[0]


def t_nested_unpack(q):
    (a, (b, c)), d = q
    return a * b - c * d + q[-1] * q[0][1][0]


def t_negative_index(p):
    return p[-1] * p[-2] + p[-3]


def t_build_and_index(x, y):
    t = (x, y, x * y)
    u = (t, x)
    (a, b, c), e = u
    return u[0][2] + u[-1] * t[-3] + t[1] + a * b * c * e


def t_cond_tuple(x, y):
    a, b = (x, y) if x > y else (y, x)
    return a * 2.0 + b


def t_mixed_tuple(p):
    a, n = p
    return a * n


def t_module_tuple(x):
    a, b = PAIR
    return x * a + b * PAIR[-1]


# ====================================================================== user function calls


def helper_scale(x, factor=2.0):
    return x * factor


def helper_kwonly(x, *, power=2, shift=0.5):
    return x**power + shift


def helper_pair(x, y):
    return (x * y, x - y)


def u_calls(x, y):
    a = helper_scale(x)
    b = helper_scale(y, factor=3.0)
    c = helper_kwonly(x, shift=y)
    d = helper_kwonly(y, power=3)
    e = helper_scale(factor=x, x=y)
    return a * b + c - d + e + helper_scale(2.0)


def u_inactive_kwonly_call(x, y):
    c = helper_kwonly(2.0, shift=0.25)
    e = helper_kwonly(3.0)
    return x * c + y * e + helper_kwonly(y, power=1, shift=x)


def u_tuple_returning(x, y):
    p, q = helper_pair(x, y)
    return p * q + helper_pair(y, x)[0]


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def square(x):
    return x * x


def u_one_param_callee(x, y):
    return square(x) + square(x * y) + square(2.0)


def rec_pair(x, n):
    if n == 0:
        return (x, 1.0)
    a, b = rec_pair(x, n - 1)
    return (a * x, b + a)


def u_rec_tuple(x, n):
    a, b = rec_pair(x, n)
    return a + b


def u_power(x, n):
    return power(x, n)


def even_chain(x, n):
    if n == 0:
        return x
    return odd_chain(x * 1.5, n - 1) + x


def odd_chain(x, n):
    if n == 0:
        return -x
    return even_chain(math.sin(x), n - 1) * 2.0


def u_mutual(x, n):
    return even_chain(x, n)


@chad.reverse
def decorated_helper(x, y):
    return x * x * y


def u_decorated_callee(x, y):
    return decorated_helper(x, y) + decorated_helper(y, 2.0)


# ====================================================================== constants, aliases, statements


def c_constants(x):
    return SCALE * x + OFFSET + math.pi * x**2 + math.e


def c_aliases(x, y):
    return m.exp(x) * sin(y) + cosine(x * y) + m.pi


def s_assert(x, y):
    assert y > 0.0, "y must be positive"
    return math.log(y) * x


def s_reassign(x, y):
    z = x
    z = z * y
    z += x
    z -= y
    z *= 2.0
    z /= y
    z **= 2
    return z


def s_aug_mod(x, y):
    w = x * 1.0
    w %= y
    v = x
    v //= y
    return w + v * y


def s_generated_name_clash(x, d, acc):
    Zero = x * d
    add = Zero + acc
    tuple_part = add * x
    EArr = tuple_part - 1.0
    dx = EArr * 2.0
    cos = 2.0
    return dx + math.sin(x) * cos


def s_docstring_pass(x):
    """A docstring is not code."""
    pass
    return x * 3.0


# ====================================================================== independence


def i_ignores_y(x, y):
    return x * 2.0


def i_constant_out(x):
    return 3.0


def i_through_discrete(x):
    return float(int(x)) * 2.0


# ====================================================================== larger examples


def rosenbrock(x, y):
    return (1.0 - x) ** 2 + 100.0 * (y - x * x) ** 2


def logistic_loss(w, b, x, label):
    z = w * x + b
    p = 1.0 / (1.0 + math.exp(-z))
    if label == 1:
        return -math.log(p)
    return -math.log(1.0 - p)


def chain20(x):
    a = x * 1.1
    b = a + 0.3
    c = math.sin(b)
    d = c * c
    e = d + x
    f = math.exp(e * 0.5)
    g = f - a
    h = g / (1.0 + x * x)
    i = math.tanh(h)
    j = i * b
    k = j + 2.0
    l_ = math.log(k)
    mm = l_ * l_
    n = mm - c
    o = n * 0.7
    p = math.cos(o)
    q = p + d
    r = q * q
    s = math.sqrt(r + 1.0)
    t = s - e
    return t
