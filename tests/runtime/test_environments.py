"""Tests of the four environment representations of `chadpy.environments` (paper, sections 4-5).

Every representation stands for the same thing, a map slot -> cotangent, so the first part runs random
scope-structured programs through all four and checks that they agree with a plain-dict reference model:

- the state-passing accumulators of Fig. 7 (`EArr`, `PersistentEnv`) run the program as a sequence of
  `push0` / `one` / `pop` calls, newest scope popped first;
- the Fig. 2 environment vectors (`DenseEV`, `SparseEV`) evaluate the same program bottom-up: `one` for a
  contribution, `plus` to combine, `push0` to lift a vector into a scope, and `split` to take a scope's slot off.

The second part pins down specific behaviour of each representation and of `dense_zero` / `dense_one_hot`, and the
third checks that the per-operation costs (bytecode instructions counted by `chadpy.runtime.cost.measure`, never
the clock) scale as the paper's table says: O(1) for `EArr` and `SparseEV`, O(|Γ|) for `DenseEV`, O(log |Γ|) for
`PersistentEnv`, and O(smaller argument) for `SparseEV.plus`.

Cotangent values are integers or halves, so every sum is exact whatever the order of the additions.
"""

from __future__ import annotations

import copy
import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chadpy.chad.transform import dense_layout
from chadpy.ir.types import INT, REAL, Lst, Tup, arr
from chadpy.runtime.cost import Cost, measure
from chadpy.runtime.cotangents import Zero, add
from chadpy.runtime.environments import DenseEV, EArr, PersistentEnv, SparseEV, _lookup, dense_one_hot, dense_zero

# ====================================================================== cotangent specs

# A slot holds either a float ("real") or a tuple of this type ("tuple"), whose cotangent is a sparse dict.
TUPLE_TYPE = Tup((REAL, Tup((REAL, REAL))))
ARR = arr(1, "f", True)  # an active 1-D float array
TUPLE_PATHS = ((0,), (1, 0), (1, 1))

# How a scope's slot is zeroed: a float 0.0, the sparse `Zero`, or the naive stage's dense tuple of zeros.
ZEROS_OF_KIND = {"real": ("real",), "tuple": ("sparse", "dense")}


def make_zero(spec: str) -> object:
    """A fresh zero cotangent from its spec."""
    if spec == "real":
        return 0.0
    if spec == "sparse":
        return Zero
    return dense_zero(dense_layout(TUPLE_TYPE))


def make_cotangent(spec: object) -> object:
    """A fresh cotangent from its spec: a float, or ((path, value), ...) for a sparse tuple cotangent."""
    if isinstance(spec, float):
        return spec
    ct: dict = {}
    for path, value in spec:
        node = ct
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    return ct


def canonical(ct: object, kind: str) -> dict:
    """A cotangent as {path: value} without zero entries, after checking it has the slot's kind.

    Zero, a dense tuple of zeros, a sparse dict and 0.0 of the same meaning all become the same map.
    """
    if kind == "real":
        assert isinstance(ct, float), f"a real slot's cotangent must be a float, got {ct!r}"
        return {} if ct == 0.0 else {(): ct}
    assert ct is Zero or isinstance(ct, dict), f"a tuple slot's cotangent must be Zero or a dict, got {ct!r}"
    flat: dict = {}

    def walk(node: object, path: tuple) -> None:
        if isinstance(node, dict):
            for key, child in node.items():
                walk(child, path + (key,))
        elif node is not Zero and node != 0.0:
            flat[path] = node

    walk(ct, ())
    return flat


def kind_of(spec: object) -> str:
    """The kind of slot a cotangent spec is for."""
    return "real" if isinstance(spec, float) else "tuple"


def canonical_sum(a: dict, b: dict) -> dict:
    """The sum of two canonical cotangents (a new map, zeros dropped)."""
    total = dict(a)
    for path, value in b.items():
        total[path] = total.get(path, 0.0) + value
    return {path: value for path, value in total.items() if value != 0.0}


# ====================================================================== scope-structured programs


@dataclass(frozen=True)
class One:
    """A contribution `d` to the cotangent of the variable in `slot` (a spec, see `make_cotangent`)."""

    slot: int
    d: object


@dataclass(frozen=True)
class Scope:
    """A new variable in the next slot, of kind `kind` zeroed by `zero`.

    `body` runs in the extended environment, `outer` in the enclosing one (it cannot see the new variable, like
    the bound expression of a `let`): Fig. 2 lifts its vector with `push0` before the `split`, Fig. 7 runs it after
    the `pop`, as its own scopes reuse the slot. The variable's total cotangent is recorded under `ident`.
    """

    ident: int
    kind: str
    zero: str
    outer: tuple
    body: tuple


@dataclass(frozen=True)
class Program:
    """Items run in an environment of parameters (one kind and zero per parameter slot)."""

    kinds: tuple[str, ...]
    zeros: tuple[str, ...]
    items: tuple
    depth: int  # the largest environment any item runs in


def random_cotangent(rng: random.Random, kind: str) -> object:
    if kind == "real":
        return rng.randint(-6, 6) / 2
    paths = rng.sample(TUPLE_PATHS, rng.randint(1, len(TUPLE_PATHS)))
    return tuple((path, rng.randint(-6, 6) / 2) for path in paths)


def random_program(rng: random.Random, max_nesting: int = 5) -> Program:
    idents = itertools.count()
    depth = 0

    def items(kinds: list[str], nesting: int) -> tuple:
        nonlocal depth
        depth = max(depth, len(kinds))
        result = []
        for _ in range(rng.randint(0, 4)):
            if nesting < max_nesting and rng.random() < 0.4:
                kind = rng.choice(("real", "tuple"))
                outer = items(kinds, nesting + 1)
                body = items(kinds + [kind], nesting + 1)
                result.append(Scope(next(idents), kind, rng.choice(ZEROS_OF_KIND[kind]), outer, body))
            else:
                slot = rng.randrange(len(kinds))
                result.append(One(slot, random_cotangent(rng, kinds[slot])))
        return tuple(result)

    kinds = [rng.choice(("real", "tuple")) for _ in range(rng.randint(1, 3))]
    zeros = tuple(rng.choice(ZEROS_OF_KIND[kind]) for kind in kinds)
    return Program(tuple(kinds), zeros, items(kinds, 0), depth)


def param_key(slot: int) -> tuple[str, int]:
    return ("param", slot)


def reference_totals(program: Program) -> dict:
    """Each variable's total cotangent, by a plain dict slot -> canonical cotangent run as a stack."""
    env: dict[int, dict] = {slot: {} for slot in range(len(program.kinds))}
    totals: dict = {}

    def run(items: tuple, n: int) -> None:
        for item in items:
            if isinstance(item, One):
                assert item.slot < n
                env[item.slot] = canonical_sum(env[item.slot], canonical(make_cotangent(item.d), kind_of(item.d)))
            else:
                env[n] = {}
                run(item.body, n + 1)
                totals[item.ident] = env.pop(n)
                run(item.outer, n)

    run(program.items, len(program.kinds))
    for slot in reversed(range(len(program.kinds))):
        totals[param_key(slot)] = env.pop(slot)
    assert not env
    return totals


def accumulator_totals(make: Callable[[int], object], program: Program) -> dict:
    """Each variable's total cotangent, by Fig. 7's state passing over `make(depth)` (EArr or PersistentEnv)."""
    acc = make(program.depth)
    totals: dict = {}
    for slot, zero in enumerate(program.zeros):
        acc.push0(slot, make_zero(zero))

    def run(items: tuple, n: int) -> None:
        for item in items:
            if isinstance(item, One):
                acc.one(item.slot, make_cotangent(item.d))
            else:
                acc.push0(n, make_zero(item.zero))
                run(item.body, n + 1)
                totals[item.ident] = canonical(acc.pop(n), item.kind)
                run(item.outer, n)  # after the pop: its own scopes reuse slot n

    run(program.items, len(program.kinds))
    for slot in reversed(range(len(program.kinds))):
        totals[param_key(slot)] = canonical(acc.pop(slot), program.kinds[slot])
    return totals


def vector_totals(ev: type, program: Program) -> dict:
    """Each variable's total cotangent, by Fig. 2's environment vectors of class `ev` (DenseEV or SparseEV)."""
    totals: dict = {}

    def vector(items: tuple, n: int) -> object:
        acc = ev.zero(n)
        for item in items:
            if isinstance(item, One):
                part = ev.one(n, item.slot, make_cotangent(item.d))
            else:
                inner = ev.plus(vector(item.body, n + 1), ev.push0(vector(item.outer, n)))
                part, d = ev.split(inner, n, make_zero(item.zero))
                totals[item.ident] = canonical(d, item.kind)
            acc = ev.plus(acc, part)
        return acc

    rest = vector(program.items, len(program.kinds))
    for slot in reversed(range(len(program.kinds))):
        rest, d = ev.split(rest, slot, make_zero(program.zeros[slot]))
        totals[param_key(slot)] = canonical(d, program.kinds[slot])
    assert rest == ev.zero(0)
    return totals


def check_all_four_agree(program: Program) -> None:
    expected = reference_totals(program)
    assert accumulator_totals(EArr, program) == expected
    assert accumulator_totals(PersistentEnv, program) == expected
    assert vector_totals(DenseEV, program) == expected
    assert vector_totals(SparseEV, program) == expected


def test_reference_model_on_a_hand_written_program():
    # param 0 (real); scope 0 (real) gets 1.5 + 2; param 0 gets 1 + 0.5 (from the scope's outer part)
    program = Program(
        kinds=("real",),
        zeros=("real",),
        items=(
            One(0, 1.0),
            Scope(0, "real", "real", outer=(One(0, 0.5),), body=(One(1, 1.5), One(1, 2.0))),
            Scope(1, "tuple", "dense", outer=(), body=(One(1, (((1, 0), 2.0),)), One(1, (((1, 0), -2.0),)))),
        ),
        depth=2,
    )
    expected = {0: {(): 3.5}, 1: {}, param_key(0): {(): 1.5}}
    assert reference_totals(program) == expected
    check_all_four_agree(program)


@pytest.mark.parametrize("seed", range(60))
def test_all_four_representations_agree_on_random_programs(seed):
    check_all_four_agree(random_program(random.Random(seed)))


@settings(max_examples=25)
@given(st.integers(0, 2**32 - 1))
def test_all_four_representations_agree_on_random_programs_hypothesis(seed):
    check_all_four_agree(random_program(random.Random(seed)))


def test_all_four_representations_agree_on_deeply_nested_scopes():
    rng = random.Random(1234)
    for _ in range(5):
        check_all_four_agree(random_program(rng, max_nesting=12))


# ====================================================================== DenseEV


def dense_entries(ev: tuple) -> list:
    """The entries of a left-nested dense vector, slot 0 (the innermost pair's second component) first."""
    entries = []
    while ev:
        ev, entry = ev
        entries.append(entry)
    return entries[::-1]


def test_dense_zero_has_n_entries_all_none():
    assert DenseEV.zero(0) == ()
    assert DenseEV.zero(1) == ((), None)
    assert DenseEV.zero(3) == ((((), None), None), None)
    for n in range(8):
        assert dense_entries(DenseEV.zero(n)) == [None] * n


def test_dense_one_puts_d_at_its_slot_with_slot_0_innermost():
    assert DenseEV.one(3, 0, "d") == ((((), "d"), None), None)
    assert DenseEV.one(3, 2, "d") == ((((), None), None), "d")
    for n in range(1, 7):
        for slot in range(n):
            entries = [None] * n
            entries[slot] = 2.5
            assert dense_entries(DenseEV.one(n, slot, 2.5)) == entries


def test_dense_split_returns_the_newest_entry_and_the_rest():
    ev = DenseEV.one(3, 2, 4.0)
    rest, d = DenseEV.split(ev, 2, 0.0)
    assert d == 4.0
    assert rest == DenseEV.zero(2)


def test_dense_split_of_an_empty_entry_returns_the_given_zero():
    zero = dense_zero(dense_layout(TUPLE_TYPE))
    rest, d = DenseEV.split(DenseEV.one(3, 0, 1.0), 2, zero)
    assert d is zero
    assert rest == DenseEV.one(2, 0, 1.0)


def test_dense_push0_then_split_round_trips():
    ev = DenseEV.one(3, 1, 2.0)
    pushed = DenseEV.push0(ev)
    assert dense_entries(pushed) == [None, 2.0, None, None]
    rest, d = DenseEV.split(pushed, 3, "zero")
    assert rest is ev
    assert d == "zero"


def test_dense_plus_adds_slot_wise():
    a = DenseEV.plus(DenseEV.one(4, 0, 1.0), DenseEV.one(4, 2, 2.0))
    assert dense_entries(a) == [1.0, None, 2.0, None]
    b = DenseEV.plus(a, DenseEV.one(4, 2, 0.5))
    assert dense_entries(b) == [1.0, None, 2.5, None]
    assert DenseEV.plus(DenseEV.zero(4), DenseEV.zero(4)) == DenseEV.zero(4)
    assert DenseEV.plus((), ()) == ()


def test_dense_plus_adds_sparse_tuple_cotangents():
    total = DenseEV.plus(DenseEV.one(2, 1, {0: 1.0}), DenseEV.one(2, 1, {0: 2.0, 1: {1: 3.0}}))
    assert dense_entries(total) == [None, {0: 3.0, 1: {1: 3.0}}]


# ====================================================================== SparseEV


def test_sparse_zero_is_a_fresh_empty_map():
    a, b = SparseEV.zero(5), SparseEV.zero(5)
    assert a == {} and a is not b


def test_sparse_one_and_push0():
    assert SparseEV.one(10, 3, 1.5) == {3: 1.5}
    ev = {0: 1.0}
    assert SparseEV.push0(ev) is ev


def test_sparse_split_of_a_present_slot_removes_it():
    ev, d = SparseEV.split({0: 1.0, 2: 3.0}, 2, 0.0)
    assert (ev, d) == ({0: 1.0}, 3.0)


def test_sparse_split_of_a_missing_slot_returns_the_given_zero():
    zero = dense_zero(dense_layout(TUPLE_TYPE))
    ev, d = SparseEV.split({0: 1.0}, 2, zero)
    assert d is zero
    assert ev == {0: 1.0}


def test_sparse_plus_unions_and_adds_overlapping_slots():
    assert SparseEV.plus({0: 1.0, 1: 2.0}, {1: 0.5, 3: 4.0}) == {0: 1.0, 1: 2.5, 3: 4.0}
    assert SparseEV.plus({}, {2: 1.0}) == {2: 1.0}
    assert SparseEV.plus({2: {0: 1.0}}, {2: {0: 1.0, 1: {0: 2.0}}}) == {2: {0: 2.0, 1: {0: 2.0}}}


def test_sparse_plus_merges_the_smaller_map_into_the_larger():
    small, large = {1: 1.0}, {0: 1.0, 1: 2.0, 2: 3.0}
    assert SparseEV.plus(small, large) is large
    assert large == {0: 1.0, 1: 3.0, 2: 3.0}
    small, large = {5: 1.0}, {0: 1.0, 1: 2.0}
    assert SparseEV.plus(large, small) is large
    assert large == {0: 1.0, 1: 2.0, 5: 1.0}


# ====================================================================== PersistentEnv and EArr


def test_persistent_env_old_versions_keep_their_values():
    env = PersistentEnv(6)
    versions = []  # (root, {slot: value} the version must read)
    model: dict[int, object] = {}
    rng = random.Random(7)
    for step in range(200):
        slot = rng.randrange(6)
        if slot not in model:
            env.push0(slot, 0.0)
            model[slot] = 0.0
        elif rng.random() < 0.2:
            assert env.pop(slot) == model.pop(slot)
        else:
            env.one(slot, float(step))
            model[slot] += float(step)
        versions.append((env.root, dict(model)))
    for root, values in versions:
        for slot in range(6):
            assert _lookup(root, env.height, slot) == values.get(slot)


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5, 7, 8, 9, 33, 1000])
def test_persistent_env_works_for_every_slot(depth):
    env = PersistentEnv(depth)
    assert 2**env.height >= depth
    for slot in range(depth):
        env.push0(slot, 0.0)
        env.one(slot, float(slot + 1))
    for slot in range(depth):
        env.one(slot, 0.5)
    assert [_lookup(env.root, env.height, slot) for slot in range(depth)] == [slot + 1.5 for slot in range(depth)]
    for slot in reversed(range(depth)):
        assert env.pop(slot) == slot + 1.5
        assert _lookup(env.root, env.height, slot) is None
    assert all(_lookup(env.root, env.height, slot) is None for slot in range(depth))


@pytest.mark.parametrize("depth", [1, 2, 3, 1000])
def test_earr_works_for_every_slot(depth):
    acc = EArr(depth)
    for slot in range(depth):
        acc.push0(slot, 0.0)
        acc.one(slot, float(slot + 1))
        acc.one(slot, 0.5)
    assert [acc.pop(slot) for slot in reversed(range(depth))] == [slot + 1.5 for slot in reversed(range(depth))]
    assert acc.slots == [None] * depth


@pytest.mark.parametrize("make", [EArr, PersistentEnv], ids=["EArr", "PersistentEnv"])
def test_pop_resets_the_slot_for_its_next_scope(make):
    acc = make(4)
    acc.push0(3, 0.0)
    acc.one(3, 2.0)
    assert acc.pop(3) == 2.0
    acc.push0(3, 0.0)
    assert acc.pop(3) == 0.0  # the first scope's 2.0 is gone
    zero = dense_zero(dense_layout(TUPLE_TYPE))
    acc.push0(3, zero)
    assert acc.pop(3) is zero
    acc.push0(3, Zero)
    acc.one(3, {1: {0: 1.0}})
    acc.one(3, {0: 2.0})
    assert acc.pop(3) == {0: 2.0, 1: {0: 1.0}}


@pytest.mark.parametrize("make", [EArr, PersistentEnv], ids=["EArr", "PersistentEnv"])
def test_one_adds_into_a_dense_zero(make):
    acc = make(2)
    acc.push0(1, dense_zero(dense_layout(TUPLE_TYPE)))
    acc.one(1, {1: {1: 2.0}})
    acc.one(1, {0: 1.0})
    assert acc.pop(1) == {0: 1.0, 1: {0: 0.0, 1: 2.0}}


# ====================================================================== dense_zero and dense_one_hot


def test_dense_zero_of_a_nested_tuple_has_every_component():
    assert dense_zero(dense_layout(Tup((REAL, Tup((REAL, REAL)))))) == {0: 0.0, 1: {0: 0.0, 1: 0.0}}


def test_dense_zero_is_fresh_each_call():
    first = dense_zero(dense_layout(TUPLE_TYPE))
    first[1][0] = 5.0
    first[0] = 1.0
    assert dense_zero(dense_layout(TUPLE_TYPE)) == {0: 0.0, 1: {0: 0.0, 1: 0.0}}


def test_dense_zero_of_scalars_lists_and_arrays():
    assert dense_zero(dense_layout(REAL)) == 0.0
    assert isinstance(dense_zero(dense_layout(REAL)), float)
    assert dense_zero(dense_layout(Lst(REAL))) is Zero
    assert dense_zero(dense_layout(ARR)) is Zero
    assert dense_zero(dense_layout(INT)) is Zero
    assert dense_zero(dense_layout(Tup((REAL, Lst(REAL), ARR)))) == {0: 0.0, 1: Zero, 2: Zero}


def test_dense_one_hot_fills_the_other_components_with_zeros():
    assert dense_one_hot(dense_layout(Tup((REAL, REAL))), 1, 2.0) == {0: 0.0, 1: 2.0}
    assert dense_one_hot(dense_layout(TUPLE_TYPE), 0, 3.0) == {0: 3.0, 1: {0: 0.0, 1: 0.0}}
    inner = {0: 0.0, 1: 4.0}
    hot = dense_one_hot(dense_layout(TUPLE_TYPE), 1, inner)
    assert hot == {0: 0.0, 1: {0: 0.0, 1: 4.0}}
    assert hot[1] is inner
    assert dense_one_hot(dense_layout(Tup((Lst(REAL), REAL))), 0, {2: 1.0}) == {0: {2: 1.0}, 1: 0.0}


def test_dense_one_hot_is_fresh_each_call():
    a = dense_one_hot(dense_layout(TUPLE_TYPE), 0, 1.0)
    a[1][1] = 9.0
    assert dense_one_hot(dense_layout(TUPLE_TYPE), 0, 1.0) == {0: 1.0, 1: {0: 0.0, 1: 0.0}}


def test_dense_one_hot_sums_to_the_sparse_one_hot():
    dense = dense_one_hot(dense_layout(TUPLE_TYPE), 1, {1: 2.0})
    assert canonical(dense, "tuple") == canonical({1: {1: 2.0}}, "tuple")
    assert canonical(add(dense_zero(dense_layout(TUPLE_TYPE)), copy.deepcopy(dense)), "tuple") == {(1, 1): 2.0}


# ====================================================================== costs


def cost_of(setup: Callable[[], tuple], operation: Callable[..., object]) -> Cost:
    """The cost of `operation(*setup())`: arguments are built outside the measurement, afresh for a warm-up run."""
    operation(*setup())
    args = setup()
    return measure(lambda: operation(*args))[1]


def opcodes_of(setup: Callable[[], tuple], operation: Callable[..., object]) -> int:
    return cost_of(setup, operation).opcodes


def exact_linear_fit(cost: Callable[[int], int], sizes: tuple[int, int, int], check: int) -> tuple[int, int]:
    """(a, b) with cost(n) == a * n + b exactly at three sizes, checked at a fourth."""
    n1, n2, n3 = sizes
    c1, c2, c3 = cost(n1), cost(n2), cost(n3)
    a, remainder = divmod(c2 - c1, n2 - n1)
    assert remainder == 0, (sizes, (c1, c2, c3))
    b = c1 - a * n1
    assert c3 == a * n3 + b, (sizes, (c1, c2, c3))
    assert cost(check) == a * check + b
    return a, b


def filled_earr(depth: int) -> EArr:
    acc = EArr(depth)
    for slot in range(depth):
        acc.push0(slot, 0.0)
    return acc


@pytest.mark.parametrize("slot", ["first", "last"])
def test_earr_operations_cost_the_same_at_depth_10_and_10000(slot):
    def costs(depth: int) -> list[Cost]:
        acc = filled_earr(depth)
        k = 0 if slot == "first" else depth - 1
        return [
            cost_of(lambda: (k, 1.0), acc.one),
            cost_of(lambda: (k,), acc.pop),
            cost_of(lambda: (k, 0.0), acc.push0),
        ]

    small, large = costs(10), costs(10_000)
    assert small == large
    assert all(cost.elements == 0 and cost.opcodes > 0 for cost in small)


def test_earr_allocation_is_charged_one_element_per_slot():
    assert measure(lambda: EArr(10))[1].elements == 10
    assert measure(lambda: EArr(10_000))[1].elements == 10_000


def test_sparse_operations_cost_the_same_for_10_and_10000_entries():
    def costs(size: int) -> list[int]:
        def vector() -> dict:
            return {slot: float(slot) for slot in range(size)}

        return [
            opcodes_of(lambda: (size, size - 1, 1.0), SparseEV.one),
            opcodes_of(lambda: (size,), SparseEV.zero),
            opcodes_of(lambda: (vector(),), SparseEV.push0),
            opcodes_of(lambda: (vector(), size - 1, 0.0), SparseEV.split),  # present slot
            opcodes_of(lambda: (vector(), size, 0.0), SparseEV.split),  # missing slot
            opcodes_of(lambda: (vector(), {size - 1: 1.0}), SparseEV.plus),  # one-hot into the vector
        ]

    assert costs(10) == costs(10_000)


def test_dense_zero_one_and_plus_cost_linear_in_the_size():
    def one_hot_sum(n: int) -> tuple:
        return DenseEV.one(n, 0, 1.0), DenseEV.one(n, n - 1, 2.0)

    zero_slope, _ = exact_linear_fit(lambda n: opcodes_of(lambda: (n,), DenseEV.zero), (8, 16, 32), 1000)
    one_slope, _ = exact_linear_fit(lambda n: opcodes_of(lambda: (n, 0, 1.0), DenseEV.one), (8, 16, 32), 1000)
    plus_slope, _ = exact_linear_fit(lambda n: opcodes_of(lambda: one_hot_sum(n), DenseEV.plus), (8, 16, 32), 1000)
    assert zero_slope > 0 and one_slope > 0 and plus_slope > 0


def test_dense_push0_and_split_cost_the_same_at_every_size():
    def costs(n: int) -> list[int]:
        return [
            opcodes_of(lambda: (DenseEV.one(n, 0, 1.0),), DenseEV.push0),
            opcodes_of(lambda: (DenseEV.one(n, n - 1, 1.0), n - 1, 0.0), DenseEV.split),
        ]

    assert costs(10) == costs(10_000)


def persistent_costs(depth: int, slot: int) -> list[int]:
    """Opcodes of one, push0 and pop on slot `slot` of a PersistentEnv(depth) where every slot is pushed."""
    env = PersistentEnv(depth)
    for k in range(depth):
        env.push0(k, 0.0)
    one = opcodes_of(lambda: (slot, 1.0), env.one)
    push0 = opcodes_of(lambda: (slot, 0.0), env.push0)
    pop = opcodes_of(lambda: (slot,), env.pop)
    return [one, push0, pop]


def test_persistent_env_costs_grow_by_a_constant_step_per_trie_level():
    levels = range(1, 11)
    costs = []
    for k in levels:
        lowest, highest = 2**k + 1, 2 ** (k + 1)  # all depths with (depth - 1).bit_length() == k + 1
        assert PersistentEnv(lowest).height == PersistentEnv(highest).height == k + 1
        at_lowest = [persistent_costs(lowest, slot) for slot in (0, lowest // 2, lowest - 1)]
        at_highest = [persistent_costs(highest, slot) for slot in (0, highest // 2, highest - 1)]
        assert at_lowest[0] == at_lowest[1] == at_lowest[2] == at_highest[0] == at_highest[1] == at_highest[2]
        costs.append(at_lowest[0])
    steps = {tuple(b - a for a, b in zip(shallower, deeper)) for shallower, deeper in zip(costs, costs[1:])}
    assert len(steps) == 1
    (step,) = steps
    assert all(s > 0 for s in step)
    # depths 1 and 2 share the one-level trie, and the step continues below depth 3
    assert persistent_costs(1, 0) == persistent_costs(2, 1)
    assert [b - a for a, b in zip(persistent_costs(2, 1), costs[0])] == list(step)


def map_of(size: int, start: int = 0) -> dict:
    return {slot: 1.0 for slot in range(start, start + size)}


@pytest.mark.parametrize("overlapping", [False, True], ids=["new-slot", "overlapping-slot"])
def test_sparse_plus_of_a_one_entry_map_costs_the_same_whatever_the_other_size(overlapping):
    def costs(size: int) -> list[int]:
        slot = 0 if overlapping else size
        return [
            opcodes_of(lambda: (map_of(size), {slot: 2.0}), SparseEV.plus),
            opcodes_of(lambda: ({slot: 2.0}, map_of(size)), SparseEV.plus),
        ]

    assert costs(10) == costs(1000)


def test_sparse_plus_costs_in_proportion_to_the_smaller_map():
    def both(size: int) -> int:  # two maps of `size` disjoint entries
        return opcodes_of(lambda: (map_of(size), map_of(size, start=size)), SparseEV.plus)

    assert both(1000) > both(10)
    slope, _ = exact_linear_fit(both, (10, 20, 40), 1000)
    assert slope > 0

    def smaller_of(small: int, large: int) -> int:
        return opcodes_of(lambda: (map_of(small), map_of(large, start=small)), SparseEV.plus)

    assert smaller_of(10, 1000) == smaller_of(10, 20)
    assert smaller_of(100, 1000) - smaller_of(10, 1000) == 90 * slope
