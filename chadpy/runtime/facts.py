"""What the optimiser may assume of a runtime function, written beside the function's definition as a
decorator (the runtime itself never reads these):

- `reads_shape_only(k)`: it reads only the shape and dtype of its argument k (of each array in it, for
  a sequence), so `release` may pass a zero-stride stand-in there and let the array go;
- `adds_into`: `ct = f(ct, ...)` adds into `ct` in place (`fuse` follows such a cotangent);
- `collects(one)`: it adds many of `one`'s one-hots at once, so a loop's calls `ct = one(ct, ..., key,
  value)` may become lists of the keys and values and one call of it after the loop (`collect`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)

READS_SHAPE_ONLY: dict[Callable, int] = {}  # function -> the position of the argument read for its shape
ADDS_INTO: list[Callable] = []  # the in-place additions
COLLECTED_BY: dict[Callable, Callable] = {}  # a one-hot addition -> the addition of many after a loop


def reads_shape_only(position: int) -> Callable[[F], F]:
    def mark(fn: F) -> F:
        READS_SHAPE_ONLY[fn] = position
        return fn

    return mark


def adds_into(fn: F) -> F:
    ADDS_INTO.append(fn)
    return fn


def collects(one: Callable) -> Callable[[F], F]:
    def mark(batch: F) -> F:
        COLLECTED_BY[one] = batch
        return batch

    return mark
