"""The generator's writes into an element of an element (progen's `Writes.x_nested_store`): `xs[i][j] = v`,
`xs[i][j] += v` on a list of new arrays or lists, `d["k"][j] = v`, `M[i][j] = v` on a matrix the function made.

Each form is in a few percent of the programs; its programs are valid Python that runs (indices in range, the
arguments unchanged), and chadpy's derivatives of them neither crash nor differ from finite differences; a
program drawing none of issue 37's forms is the program made without them."""

from __future__ import annotations

import pytest

from tests.random.test_differential import ISSUE_37, assert_a_stream_of_their_own, assert_runs
from tests.support import differential as D
from tests.support import progen

NESTED = ("nested_store", "nested_arrays", "nested_lists", "nested_dict", "nested_matrix")
MORE = {"x_nested_store": 40.0, "extras": 0.15}  # mostly nested writes, for the forms' own checks


@pytest.mark.slow  # 3 s: 600 programs generated
def test_nested_writes_appear_in_a_few_percent_of_programs():
    having = sum("nested_store" in progen.generate(seed).features for seed in range(600))
    assert 12 <= having <= 45, having


def test_nested_write_programs_run():
    first: dict[str, progen.Program] = {}
    for seed in range(300):
        program = progen.generate(seed, MORE)
        for name in program.features:
            if name.startswith("nested_"):
                first.setdefault(name, program)
    assert set(NESTED) | {"nested_append", "nested_loop", "nested_recur", "nested_row_read"} <= set(first)
    for name, program in first.items():
        assert_runs(name, program)


@pytest.mark.slow  # 6 s: 40 programs checked against finite differences
def test_nested_write_programs_are_valid():
    """None is `invalid` (the plain call raises or returns no finite float), crashes chadpy or is wrong."""
    outcomes = {}
    for seed in range(40):
        program = progen.generate(seed, MORE)
        if "nested_store" in program.features:
            outcomes[seed] = D.check(program)
    assert len(outcomes) >= 20
    bad = {s: o for s, o in outcomes.items() if o.cls in ("invalid", "crash", "wrong")}
    assert not bad, bad


def test_nested_writes_are_a_stream_of_their_own():
    assert_a_stream_of_their_own(set(ISSUE_37) | set(NESTED))
