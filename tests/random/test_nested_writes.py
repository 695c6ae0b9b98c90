"""The generator's writes into an element of an element (progen's `Writes.x_nested_store`): `xs[i][j] = v`,
`xs[i][j] += v` on a list of new arrays or lists, `d["k"][j] = v`, `M[i][j] = v` on a matrix the function made.

Each form is in a few percent of the programs; its programs are valid Python that runs (indices in range, the
arguments unchanged), and chadpy's derivatives of them neither crash nor differ from finite differences; a
program drawing none of issue 37's forms is the program made without them."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from tests.random.test_differential import ISSUE_37
from tests.support import differential as D
from tests.support import fd, progen

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
        f = D.load(program.source)
        args = progen.bind_args(program.args, f.__globals__)
        before = copy.deepcopy(args)
        value = f(*args)
        assert isinstance(value, (float, np.floating)) and math.isfinite(value), (name, program.seed, value)
        assert f(*args) == value, (name, program.seed)
        fd.assert_same(args, before, f"arguments after f, seed {program.seed}")


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
    ours = set(ISSUE_37) | set(NESTED)
    for seed in range(40):
        without = progen.generate(seed, {"extras": 0.0})
        assert not ours & set(without.features), seed
        program = progen.generate(seed)
        if not ours & set(program.features):
            assert program.source == without.source and program.argnums == without.argnums, seed
