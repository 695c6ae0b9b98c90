"""The four stages of the paper, each a transformation paired with a runtime (docs/design.md section 6).

| stage | transformation | environment | cotangents of tuples |
| --- | --- | --- | --- |
| `naive` | Fig. 2 | `DenseEV` (Fig. 4) | dense zeros and one-hots |
| `sparse` | Fig. 2 | `SparseEV` (4.1) | `Zero` and sparse dicts |
| `monadic` | Fig. 7 | `PersistentEnv` (4.2) | `Zero` and sparse dicts |
| `efficient` | Fig. 7 | `EArr` (5) | `Zero` and sparse dicts |

The transformation changes only between `sparse` and `monadic` (`returned_vectors.py` turns
Fig. 7's state passing back into Fig. 2's returned vectors); every other step swaps
the runtime. Only `efficient` is simplified (inlining, accumulator slots as locals):
simplifying the others would remove the very environment operations they exist to show.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ChadError
from ..runtime.environments import DenseEV, EArr, PersistentEnv, SparseEV


@dataclass(frozen=True)
class Stage:
    """One of the paper's four stages: which transformation it uses and which environment runs it."""

    name: str
    state_passing: bool  # Fig. 7 (an accumulator threaded through) or Fig. 2 (vectors returned)
    environment: type  # the accumulator class (Fig. 7) or the environment vector class (Fig. 2)
    dense_tuples: bool  # Fig. 4: zeros and one-hots of tuple cotangents built in full
    simplifiable: bool  # only efficient: the others exist to show their environment operations
    paper: str


STAGES = {
    s.name: s
    for s in (
        Stage("naive", False, DenseEV, True, False, "Sections 2 and 4: Fig. 2 with Fig. 4's dense types"),
        Stage("sparse", False, SparseEV, False, False, "Section 4.1: sparse products, map environment, + as union"),
        Stage("monadic", True, PersistentEnv, False, False, "Section 4.2: Fig. 7, state passing over a persistent map"),
        Stage("efficient", True, EArr, False, True, "Section 5: Fig. 7 over a mutable array"),
    )
}


def stage_named(name: str) -> Stage:
    try:
        return STAGES[name]
    except KeyError:
        raise ChadError(f"unknown stage {name!r}; choose one of {', '.join(STAGES)}") from None
