"""Differential tester: random programs (`progen.py`) differentiated by chadpy, checked against
plain Python and central finite differences.

`check(program)` classifies one program:

- `ok`: the value, the gradient's structure and every checked gradient element are right;
- `wrong`: chadpy's value differs from `f(*args)`, or the gradient has the wrong structure,
  type, shape or dtype, or disagrees with central differences, or chadpy mutated an
  argument; with `stages=True` also: a stage of `fd.MODES` disagrees with the efficient one;
- `crash`: an exception other than `chad.ChadError` escaped chadpy or the derivative it
  generated (or the check hung: `Timeout`);
- `rejected`: a `chad.ChadError`, chadpy's "I cannot differentiate this";
- `invalid`: the program itself raised or returned a non-finite value (a generator bug);
- `skipped`: central differences are untrustworthy at every gradient element (the two
  one-sided differences disagree: a kink or a branch switch within the step).

`shrink(program, outcome)` deletes statements, helpers, parameters and subexpressions while
the failure stays in the same class (and symptom); `format_regression(program)` prints the
result as a ready-to-paste pytest test.

Command line (from the repository root)::

    python -m tests.support.differential --n 10000 --seed 0 --jobs 2 [--stages-every 10] [--shrink] [--show CLASS]
    python -m tests.support.differential --seed S --n 1 --print
    python -m tests.support.differential --n 2000 --weight fv_helper=0 --weight a_nested_literal=0  # other weights
"""

from .batches import grouped, main, run_batch, shrink_batch, summary
from .check import Outcome, check, leaves, load
from .shrinking import format_regression, same_failure, shrink

__all__ = [
    "Outcome",
    "check",
    "format_regression",
    "grouped",
    "leaves",
    "load",
    "main",
    "run_batch",
    "same_failure",
    "shrink",
    "shrink_batch",
    "summary",
]
