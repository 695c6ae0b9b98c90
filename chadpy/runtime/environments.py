"""The four representations of the environment cotangent, one per stage of the paper.

A backpropagator of a term in environment Γ produces one cotangent per variable of Γ.
The paper improves how that "environment vector" is represented in three steps; each
class below is one step, and swapping one for another is all that changes between
stages that share a transformation (see `stages.py`):

| class | stage | paper | zero | one-hot | `+` | scope (push / split) |
| --- | --- | --- | --- | --- | --- | --- |
| `DenseEV` | naive | Fig. 4 | O(|Γ|) | O(|Γ|) | O(|Γ|) | O(1) |
| `SparseEV` | sparse | 4.1 | O(1) | O(1) | union: O(smaller) | O(1) |
| `PersistentEnv` | monadic | 4.2, Fig. 6 | - | O(log |Γ|) | - | O(log |Γ|) |
| `EArr` | efficient | 5, Fig. 8 | - | O(1) | - | O(1) |

`DenseEV` and `SparseEV` are values returned by Fig. 2 backpropagators (`zero`, `one`,
`plus`, `push0`, `split`); `PersistentEnv` and `EArr` are the state of Fig. 7's
state-passing backpropagators (`push0`, `one`, `pop`). Every cost above counts
Python instructions, so `chadpy.cost` sees it (no C-level bulk copies).

Slots are De Bruijn levels: slot 0 is the first parameter, the newest variable has
the highest slot.
"""

from __future__ import annotations

from .cost import charge
from .cotangents import add

# ---------------------------------------------------------------- Fig. 2 environment vectors


class DenseEV:
    """Fig. 4: the environment vector is the tuple of all |Γ| cotangents.

    Nested to the left as in the paper, `(((), c0), c1), ..., c_last)`, so that `split`
    and `push0` are O(1) while `zero`, `one` and `plus` touch every slot. An entry
    nobody wrote holds `None` (the zero of its slot).
    """

    @staticmethod
    def zero(size: int) -> tuple:
        ev: tuple = ()
        for _ in range(size):
            ev = (ev, None)
        return ev

    @staticmethod
    def one(size: int, slot: int, d: object) -> tuple:
        ev: tuple = ()
        for k in range(size):
            ev = (ev, d if k == slot else None)
        return ev

    @staticmethod
    def plus(a: tuple, b: tuple) -> tuple:
        """Slot-wise sum: walks both vectors to the bottom and rebuilds."""
        sums = []
        while a:
            (a, x), (b, y) = a, b
            sums.append(x if y is None else y if x is None else add(x, y))
        ev: tuple = ()
        for s in reversed(sums):
            ev = (ev, s)
        return ev

    @staticmethod
    def push0(ev: tuple) -> tuple:
        return (ev, None)

    @staticmethod
    def split(ev: tuple, slot: int, zero: object) -> tuple[tuple, object]:
        """The vector without its newest slot, and that slot's cotangent."""
        rest, d = ev
        return rest, zero if d is None else d


class SparseEV:
    """Section 4.1: the environment vector as a map slot -> cotangent (absent = zero).

    A Python dict: zero, one-hot, push and split are O(1), and `+` is a union that
    merges the smaller map into the larger (Appendix A's "magical" O(smaller) union; it
    may reuse its arguments because a vector is used once). What remains slow is
    the union itself: where two large vectors meet, and that is Appendix A.
    """

    @staticmethod
    def zero(size: int) -> dict:
        return {}

    @staticmethod
    def one(size: int, slot: int, d: object) -> dict:
        return {slot: d}

    @staticmethod
    def plus(a: dict, b: dict) -> dict:
        return add(a, b)  # smaller into larger, adding where both have a slot

    @staticmethod
    def push0(ev: dict) -> dict:
        return ev  # only the type changes: the new slot is absent, i.e. zero

    @staticmethod
    def split(ev: dict, slot: int, zero: object) -> tuple[dict, object]:
        return ev, ev.pop(slot, zero)


# ---------------------------------------------------------------- Fig. 7 accumulators


def _lookup(node: object, height: int, slot: int) -> object:
    while height and node is not None:
        height -= 1
        node = node[(slot >> height) & 1]
    return node


def _assoc(node: object, height: int, slot: int, value: object) -> object:
    """A new trie with `slot` set to `value`: copies the path to it, shares the rest."""
    if height == 0:
        return value
    left, right = (None, None) if node is None else node
    if (slot >> (height - 1)) & 1:
        return (left, _assoc(right, height - 1, slot, value))
    return (_assoc(left, height - 1, slot, value), right)


class PersistentEnv:
    """Section 4.2: the state of the state monad is an immutable map (Fig. 6's EMap).

    The map is a persistent binary trie on slot numbers (height log2 of the depth):
    every operation builds a new version along one root-to-leaf path and the object
    just holds the current version, so each costs O(log |Γ|): the log factor that
    Section 5 removes. (The trie is persistent; the cotangents in it are, as everywhere,
    used once and may be added into in place, so an old version is never read again.)
    """

    __slots__ = ("root", "height")

    def __init__(self, depth: int):
        self.height = max(1, (depth - 1).bit_length())
        self.root: object = None

    def push0(self, slot: int, zero: object) -> None:
        self.root = _assoc(self.root, self.height, slot, zero)

    def one(self, slot: int, d: object) -> None:
        self.root = _assoc(self.root, self.height, slot, add(_lookup(self.root, self.height, slot), d))

    def pop(self, slot: int) -> object:
        value = _lookup(self.root, self.height, slot)
        self.root = _assoc(self.root, self.height, slot, None)
        return value


class EArr:
    """Section 5, Fig. 8: a preallocated mutable array with one slot per variable: O(1) each."""

    __slots__ = ("slots",)

    def __init__(self, depth: int):
        charge(depth)  # one C-level allocation of `depth` slots: the c_run * |Γ| of Table 2
        self.slots = [None] * depth

    def push0(self, slot: int, zero: object) -> None:
        self.slots[slot] = zero

    def one(self, slot: int, d: object) -> None:
        self.slots[slot] = add(self.slots[slot], d)

    def pop(self, slot: int) -> object:
        value = self.slots[slot]
        self.slots[slot] = None
        return value


# ---------------------------------------------------------------- Fig. 4's dense products


def dense_zero(layout: object) -> object:
    """The naive stage's zero of a tuple cotangent: every component present (Fig. 4). `layout` is the
    zero of each component, a tuple for a tuple's (`transform.dense_layout` makes it from the type)."""
    if isinstance(layout, tuple):
        return {k: dense_zero(item) for k, item in enumerate(layout)}
    return layout


def dense_one_hot(layout: object, k: int, d: object) -> object:
    """The naive stage's cotangent of a tuple from that of its component k: `<0, .., d, .., 0>`."""
    ct = dense_zero(layout)
    ct[k] = d
    return ct
