"""The optimiser: from the paper's form to hand-written-looking adjoint code, keeping every value.

`PASSES` runs in this order over each specialisation's target program (`pipeline.PASSES` lists them
with the rest; `chad.source(f, *args, after=NAME)` prints the program after one):

| pass | module | what it does |
| --- | --- | --- |
| `hoist` | `inlining` | both branches of an `if` define the same backpropagator: define it once after the `if` |
| `inline` | `inlining` | a backpropagator called once is replaced by its body |
| `localize` | `inlining` | with everything inlined, each slot of the accumulator becomes a local variable |
| `zeros` | `dataflow` | `dz = 0.0` followed by `dz += e` becomes `dz = e` |
| `copies` | `dataflow` | `dw = dr` with both never changed again: read `dr` for `dw` |
| `uniforms` | `uniform_cotangents` | a sum's cotangent (one number at every element) meets an array as the number |
| `dead` | `dataflow` | cotangents nobody reads are not computed |
| `tidy` | `peephole` | no empty branches, one-hots added in place, no `unbroadcast` where shapes cannot differ |
| `fuse` | `forward_sums` | a loop carrying one float cotangent unchanged sums its reverse pass forward: no tape |
| `collect` | `batched_one_hots` | a loop's one-hots to a cotangent it only adds to go to two lists, added once |
| `zeros_again`, `copies_again` | `dataflow` | the same, for what `tidy` and `fuse` leave |
| `tapes` | `dataflow` | a loop records only the primal values its reverse pass still reads |
| `release` | `shape_stand_ins` | arrays the backward pass reads only for their shape are let go in the forward pass |

The forward pass runs exactly the user's operations, in the user's order: the passes only add
statements to it (`fuse`'s sums, `collect`'s lists, `release`'s stand-ins and `del`s).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..ir.types import VType
from ..target.statements import (
    AccOne,
    AccPop,
    AccPush,
    Def,
    Stmt,
    in_defs,
    replace,
    walk,
)
from .batched_one_hots import collect
from .dataflow import propagate_copies, propagate_zeros, remove_dead_cotangents, trim_tapes
from .forward_sums import fuse
from .inlining import hoist_case_backpropagators, inline_backpropagators, localize_accumulator
from .peephole import tidy
from .shape_stand_ins import release
from .uniform_cotangents import uniforms


@dataclass
class Optimising:
    """One specialisation's target program as the passes rewrite it: the function, its variables'
    types (for the passes about arrays), and the accumulator's slots once inlining made them static."""

    fn: Def
    types: dict[str, VType] | None = None
    slots: frozenset[str] = frozenset()  # the names of the slots' cotangents

    def in_backpropagators(self, rewrite: Callable[[list[Stmt]], list[Stmt]]) -> None:
        """Rewrite the bodies of the backpropagators (never primal code)."""
        self.fn = replace(self.fn, body=in_defs(self.fn.body, rewrite))


def hoist(o: Optimising) -> None:
    """Both branches of an `if` define the same backpropagator: define it once after the `if`."""
    o.fn = replace(o.fn, body=hoist_case_backpropagators(o.fn.body))


def inline(o: Optimising) -> None:
    """A backpropagator called once is replaced by its body."""
    body = inline_backpropagators(o.fn.body)
    o.slots = frozenset(s.ct for s in walk(body) if isinstance(s, (AccPush, AccOne, AccPop)))
    o.fn = replace(o.fn, body=body)


def localize(o: Optimising) -> None:
    """With everything inlined, each slot of the accumulator becomes a local variable."""
    o.fn = replace(o.fn, body=[localize_accumulator(s) if isinstance(s, Def) else s for s in o.fn.body])


def zeros(o: Optimising) -> None:
    """`dz = 0.0` followed by `dz += e` becomes `dz = e`; adding zero is dropped."""
    o.in_backpropagators(propagate_zeros)


def copies(o: Optimising) -> None:
    """`dw = dr` with both never changed again: read `dr` for `dw`."""
    o.in_backpropagators(lambda b: propagate_copies(b, o.slots))


def uniform(o: Optimising) -> None:
    """The cotangent of a sum, one number at every element, meets an array of its shape as the number."""
    if o.types:
        o.fn = uniforms(o.fn, o.types)


def dead(o: Optimising) -> None:
    """Cotangents nobody reads are not computed."""
    o.in_backpropagators(remove_dead_cotangents)


def tidied(o: Optimising) -> None:
    """No empty branches, one-hots added in place, no `unbroadcast` where the shapes cannot differ."""
    o.fn = tidy(o.fn, o.types)


def fused(o: Optimising) -> None:
    """A loop that carries one float cotangent unchanged sums its reverse pass forward: no tape."""
    o.fn = fuse(o.fn)


def collected(o: Optimising) -> None:
    """A loop's one-hots to a cotangent it only adds to are appended to two lists, added once after."""
    o.fn = collect(o.fn)


def tapes(o: Optimising) -> None:
    """A loop records only the primal values its reverse pass still reads."""
    o.fn = trim_tapes(o.fn)


def released(o: Optimising) -> None:
    """Arrays the backward pass reads only for their shape are let go in the forward pass."""
    if o.types:
        o.fn = release(o.fn, o.types)


# The passes in the order they run (`pipeline.PASSES` names them); zeros and copies run again after
# tidy and fuse, which leave zeros and copies of their own.
PASSES: tuple[tuple[str, Callable[[Optimising], None]], ...] = (
    ("hoist", hoist),
    ("inline", inline),
    ("localize", localize),
    ("zeros", zeros),
    ("copies", copies),
    ("uniforms", uniform),
    ("dead", dead),
    ("tidy", tidied),
    ("fuse", fused),
    ("collect", collected),
    ("zeros_again", zeros),
    ("copies_again", copies),
    ("tapes", tapes),
    ("release", released),
)


def simplify(fn: Def, types: dict[str, VType] | None = None) -> Def:
    """The simplified form of a CHAD-transformed function (`types`: its variables', for `tidy`)."""
    o = Optimising(fn, types)
    for _, run in PASSES:
        run(o)
    return o.fn
