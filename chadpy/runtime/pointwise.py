"""The run-time half of `rules/pointwise.py`: the partial derivatives too long to write inline (a power's,
`lgamma`'s digamma)."""

from __future__ import annotations

import math

import numpy as np

from .cotangents import Zero


def pow_base_ct(d: float, a: float, b: float) -> float:
    """Cotangent of a in a ** b (0 for a zero cotangent, also where the partial is infinite; `Zero` for `Zero`)."""
    if d is Zero or d is None:
        return Zero
    return 0.0 if b == 0 or d == 0 else d * b * a ** (b - 1)


def pow_exponent_ct(d: float, y: float, a: float) -> float:
    """Cotangent of b in y = a ** b: d * y * log(a); zero at a == 0, undefined (nan) for a < 0 but zero for a zero
    cotangent (a strong zero, as `power_exponent_ct` and the tangent rule give: `x ** y` with x < 0 nobody reads
    is no nan in y's gradient); `Zero` for `Zero`."""
    if d is Zero or d is None:
        return Zero
    if a > 0:
        return d * y * math.log(a)
    return 0.0 if a == 0 or d == 0 else math.nan


def power_base_ct(d: object, a: object, b: object) -> object:
    """Cotangent of a in np.power(a, b) / `a ** b` on arrays (zero where b == 0). No cotangent (`Zero`: NumPy's
    power of numbers takes its cotangent as it comes, not made a dense array) gives `Zero`."""
    if d is Zero or d is None:
        return Zero
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.equal(b, 0) | np.equal(d, 0), 0.0, d * b * np.power(a, b - 1.0))[()]  # a number's a number


def power_exponent_ct(d: object, y: object, a: object) -> object:
    """Cotangent of b in y = a ** b on arrays: d * y * log(a); 0 where a == 0, nan where a < 0 but 0 where d is
    (`Zero` for `Zero`)."""
    if d is Zero or d is None:
        return Zero
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(np.greater(a, 0), a, 1.0)
        undefined = np.where(np.equal(a, 0) | np.equal(d, 0), 0.0, np.nan)
        return np.where(np.greater(a, 0), d * y * np.log(safe), undefined)[()]


def strong_zero(d: object, ct: object) -> object:
    """`ct`, exactly 0 where the cotangent `d` is 0 (0 * inf is NaN in `ct` there: a partial at its pole).
    One sum finds whether `ct` has a NaN at all; only then is it replaced where d is 0."""
    if type(ct) is np.ndarray and math.isnan(np.add.reduce(ct, axis=None)):
        return np.where(np.equal(d, 0), 0.0, ct)
    if type(ct) is not np.ndarray and ct != ct and d == 0:  # a NaN number
        return 0.0
    return ct


def digamma(x: float) -> float:
    """psi(x) = d/dx lgamma(x) (the rules of `math.gamma` and `math.lgamma`): the reflection formula below
    1/2, the recurrence psi(x) = psi(x + 1) - 1/x up to 10, then the asymptotic series (error < 1e-14).
    At a pole (0, -1, -2, ...) gamma itself raises ValueError before this runs."""
    if x < 0.5:
        return digamma(1.0 - x) - math.pi / math.tan(math.pi * x)
    total = 0.0
    while x < 10.0:
        total -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f * (1 / 132)))))
    return total + math.log(x) - 0.5 / x - series


_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330)


def polygamma(n: int, x: float) -> float:
    """psi^(n)(x), the n-th derivative of digamma (n >= 1: the tangents of `digamma`'s, of any order), which is
    (-1)^(n+1) n! sum_k (x + k)^-(n+1): the terms below 10 + n one by one (x < 0 too), then the tail's asymptotic
    series (Bernoulli numbers B_2j above; error < 1e-15 relative)."""
    head = 0.0
    while x < 10.0 + n:
        head += x ** -(n + 1)
        x += 1.0
    tail = math.factorial(n - 1) / x**n + math.factorial(n) / (2.0 * x ** (n + 1))
    for j, b in enumerate(_BERNOULLI, 1):
        tail += b * math.factorial(2 * j + n - 1) / (math.factorial(2 * j) * x ** (2 * j + n))
    return (-1) ** (n + 1) * (math.factorial(n) * head + tail)
