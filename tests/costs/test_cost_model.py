"""The cost model itself (chadpy.cost, docs/design.md section 7): exact opcode counts, element charges, determinism.

Every assertion compares numbers, so a tracer that stopped counting, a hook that stopped charging, or a model fooled by
work done inside one C call makes a test fail.
"""

import gc
import sys
import threading
import types
import warnings
from collections import namedtuple

import numpy as np
import pytest

from chadpy.runtime.cost import Cost, CountedArray, charge, counted, measure, uncounted


def cost_of(thunk, warm=True):
    """The cost of `thunk()`, after one unmeasured warm-up run (first-call effects are the program's business)."""
    if warm:
        thunk()
    return measure(thunk)[1]


def second_difference(costs):
    """c(3n) - 2 c(2n) + c(n): zero for a cost linear in n, 2 a n^2 for a n^2 + ..."""
    c1, c2, c3 = costs
    return c3 - 2 * c2 + c1


def loop(n):
    t = 0
    for i in range(n):
        t += i
    return t


def helper(x):
    y = x * 2
    return y + 1


def calls(n):
    t = 0
    for i in range(n):
        t += helper(i)
    return t


# ---------------------------------------------------------------------------------------------------------------------
# Cost values


def test_cost_value():
    c = Cost(3, 4) + Cost(10, 20)
    assert c == Cost(13, 24)
    assert c.total == 37
    with pytest.raises(AttributeError):
        c.opcodes = 0  # frozen


def test_measure_returns_the_result():
    result, cost = measure(lambda: loop(10))
    assert result == 45
    assert isinstance(cost, Cost)
    assert cost.opcodes > 0 and cost.elements == 0


# ---------------------------------------------------------------------------------------------------------------------
# Opcodes


def test_python_loop_is_exactly_linear():
    costs = [cost_of(lambda n=n: loop(n)).opcodes for n in (100, 200, 300, 400)]
    steps = [b - a for a, b in zip(costs, costs[1:])]
    assert steps[0] == steps[1] == steps[2]
    assert steps[0] >= 100 * 4  # at least FOR_ITER, STORE_FAST, the +=, JUMP_BACKWARD per iteration
    assert costs[0] < 2 * steps[0]  # the constant part is small: nothing outside the loop is charged per iteration


def test_counts_are_deterministic():
    x = counted(np.arange(50.0))

    def thunk():
        y = np.sum(x * x) + np.linalg.norm(x)
        return y + loop(30) + calls(10)

    costs = [measure(thunk)[1] for _ in range(5)]
    assert len(set(costs)) == 1
    assert costs[0].opcodes > 0 and costs[0].elements > 0


def test_adaptive_specialisation_does_not_change_counts():
    def f(n):
        s = 0.0
        for i in range(n):
            if i % 3:
                s += i * 2.0
            else:
                s -= len([i])
        return s

    fresh = types.FunctionType(f.__code__.replace(), f.__globals__)  # own code object: never specialised
    cold = measure(lambda: fresh(50))[1]
    for _ in range(5000):
        f(50)  # quickened, specialised, superinstructions
    hot = measure(lambda: f(50))[1]
    assert cold == hot


def test_nested_calls_are_counted():
    one_call = cost_of(lambda: helper(1)).opcodes
    with_calls = [cost_of(lambda n=n: calls(n)).opcodes for n in (50, 100, 150)]
    without = [cost_of(lambda n=n: loop(n)).opcodes for n in (50, 100, 150)]
    assert with_calls[1] - with_calls[0] == with_calls[2] - with_calls[1]
    per_iteration = (with_calls[1] - with_calls[0]) // 50
    per_iteration_without = (without[1] - without[0]) // 50
    assert per_iteration > one_call  # the helper's body is counted on every call, plus the loop around it
    assert per_iteration - per_iteration_without >= 8  # helper's body: 8 instructions after RESUME


def test_generator_frames_are_counted_on_every_resume():
    def gen(n):
        for i in range(n):  # noqa: UP028 (a frame resumed per item on purpose)
            yield i

    costs = [cost_of(lambda n=n: sum(gen(n))).opcodes for n in (100, 200, 300)]
    assert costs[1] - costs[0] == costs[2] - costs[1] >= 100 * 3


def test_callbacks_from_c_are_counted():
    xs = list(range(200))
    plain = cost_of(lambda: sorted(xs)).opcodes
    keyed = cost_of(lambda: sorted(xs, key=lambda v: -v)).opcodes
    assert keyed - plain >= 200 * 2


def test_c_level_copies_are_opcode_blind_and_charge_fixes_it():
    small = cost_of(lambda: [0.0] * 10)
    big = cost_of(lambda: [0.0] * 100_000)
    assert small == big  # the documented blind spot: one C call, whatever n is

    def charged(n):
        charge(n)
        return [0.0] * n

    assert cost_of(lambda: charged(100_000)).elements - cost_of(lambda: charged(10)).elements == 100_000 - 10


def test_tracing_restored_after_exception():
    before = sys.gettrace()

    def boom():
        loop(10)
        raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        measure(boom)
    assert sys.gettrace() is before
    assert measure(lambda: loop(10))[1] == measure(lambda: loop(10))[1]  # still usable afterwards


def test_previous_trace_function_restored():
    events = []

    def foreign(frame, event, arg):
        events.append(event)
        return None

    original = sys.gettrace()
    sys.settrace(foreign)
    try:
        with pytest.raises(KeyError):
            measure(lambda: {}[1])
        after = sys.gettrace()
    finally:
        sys.settrace(original)
    assert after is foreign


def test_replacing_the_tracer_inside_is_an_error_where_it_counts():
    """3.11 counts through the trace function: a thunk that replaces it cannot be measured. From 3.12 the count is
    sys.monitoring's and a trace function is another tool: the thunk is measured as if it had not."""
    before = sys.gettrace()

    def rogue():
        sys.settrace(None)
        return loop(10)

    if sys.version_info < (3, 12):
        with pytest.raises(RuntimeError, match="replaced the trace function"):
            measure(rogue)
    else:
        assert (
            measure(rogue)[1].opcodes
            == measure(lambda: loop(10))[1].opcodes + cost_of(lambda: sys.settrace(None)).opcodes
        )
    assert sys.gettrace() is before


def test_gc_disabled_while_measuring_and_restored():
    assert gc.isenabled()
    inside, _ = measure(gc.isenabled)
    assert inside is False
    assert gc.isenabled()


def test_nested_measure_counts_into_both():
    x = counted(np.ones(40))
    inner_thunk = lambda: loop(50) + float(np.sum(x + x))  # noqa: E731
    alone = cost_of(inner_thunk)
    (inner_result, inner), outer = measure(lambda: measure(inner_thunk))
    assert inner == alone
    assert outer.opcodes > inner.opcodes
    assert outer.elements == inner.elements  # no array work outside the inner measure
    assert outer.opcodes - inner.opcodes < 50  # the outer one pays only for calling the inner one


def test_exception_in_nested_measure():
    before = sys.gettrace()

    def outer():
        try:
            measure(lambda: {}[0])
        except KeyError:
            pass
        return loop(20)

    assert measure(outer)[0] == loop(20)
    assert sys.gettrace() is before
    assert measure(lambda: loop(20))[1] == measure(lambda: loop(20))[1]


def test_other_threads_are_not_counted():
    def work():
        charge(1000)
        loop(10_000)

    def thunk():
        t = threading.Thread(target=work)
        t.start()
        t.join()

    _, cost = measure(thunk)
    assert cost.elements == 0
    assert cost.opcodes < 10_000 * 4  # the other thread's loop is not traced


def test_warnings_do_not_break_determinism():
    x = counted(np.array([0.0, 1.0, 2.0]))
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("default")  # shown once per location, then remembered in the registry
        cost_of(lambda: np.log(x))  # the first display may read source files (linecache): a first-call effect
        costs = [measure(lambda: np.log(x))[1] for _ in range(3)]
    assert len(set(costs)) == 1
    # measure invalidates the registries: every run handles the warning the same way (1 warm-up + 4 measured)
    assert [str(w.message) for w in log] == ["divide by zero encountered in log"] * 5


# ---------------------------------------------------------------------------------------------------------------------
# Elements


N = 1000


def test_elementwise_operator_charges_inputs_and_output():
    x = counted(np.arange(float(N)))
    result, cost = measure(lambda: x + x)
    assert isinstance(result, CountedArray)
    assert cost.elements == 3 * N


def test_reductions_and_array_functions_charge():
    x = counted(np.arange(float(N)))
    assert measure(lambda: np.sum(x))[1].elements >= N
    assert measure(lambda: x.sum())[1].elements >= N
    assert measure(lambda: np.zeros_like(x))[1].elements >= N
    assert measure(lambda: np.linalg.norm(x))[1].elements >= N
    assert measure(lambda: np.concatenate([x, x]))[1].elements >= 4 * N
    assert measure(lambda: np.outer(x[:30], x[:40]))[1].elements >= 30 * 40


def test_add_at_charges_the_scattered_elements_not_the_target():
    x = counted(np.zeros(N))
    idx = [1, 5, 5, 7]
    _, small = measure(lambda: np.add.at(x, idx, 1.0))
    assert len(idx) <= small.elements < 20
    big_idx = list(range(N))
    _, big = measure(lambda: np.add.at(x, big_idx, 1.0))
    assert big.elements >= 2 * N  # indices plus the elements they select
    assert x[5] == 3.0


def test_indexing_charges():
    x = counted(np.arange(float(N)))
    assert measure(lambda: x[3])[1].elements <= 2
    assert measure(lambda: x[: N // 2])[1].elements >= N // 2

    def assign_all():
        x[:] = 1.0

    def assign_two():
        x[[1, 2]] = 0.0

    assert measure(assign_all)[1].elements >= N
    assert measure(assign_two)[1].elements < 10
    assert x[0] == 1.0 and x[1] == 0.0


def test_c_level_methods_charge():
    x = counted(np.arange(float(N)))
    for method in (x.copy, x.tolist, lambda: list(x), lambda: x.astype(np.float32), lambda: x.fill(2.0)):
        assert measure(method)[1].elements >= N


def test_contractions_charge_the_multiply_adds():
    a = counted(np.ones((20, 30)))
    b = counted(np.ones((30, 40)))
    for product in (lambda: a @ b, lambda: np.dot(a, b), lambda: a.dot(b)):
        result, cost = measure(product)
        assert isinstance(result, CountedArray)
        assert cost.elements >= 20 * 30 * 40


def test_plain_arrays_charge_nothing():
    p = np.arange(float(N))
    assert measure(lambda: p + p)[1].elements == 0
    assert measure(lambda: np.sum(p))[1].elements == 0
    assert measure(lambda: np.zeros(N))[1].elements == 0  # documented: creation from a shape is not charged
    assert measure(lambda: np.array(counted(p)))[1].elements == 0  # documented: np.array copies for free


def test_hooks_cost_no_opcodes():
    p = np.arange(12.0)
    x = counted(p)
    ops = [
        lambda a: a + a,
        lambda a: np.sum(a),
        lambda a: a.mean(),
        lambda a: np.zeros_like(a),
        lambda a: np.add.at(np.zeros_like(a), [1, 2], 1.0),
        lambda a: np.dot(a, a),
        lambda a: a.dot(a),
        lambda a: np.concatenate([a, a]),
        lambda a: a[[1, 2]],
        lambda a: list(a),
    ]
    for op in ops:
        assert cost_of(lambda op=op: op(p)).opcodes == cost_of(lambda op=op: op(x)).opcodes


def test_charge():
    assert measure(lambda: charge(17))[1].elements == 17
    assert measure(lambda: [charge(3) for _ in range(4)])[1].elements == 12
    charge(5)  # outside measure: a no-op
    assert measure(lambda: None)[1].elements == 0
    with pytest.raises(ValueError):
        charge(-1)


def test_charges_only_inside_measure():
    x = counted(np.ones(N))
    for _ in range(3):
        x + x  # noqa: B018 (not measured: charges nothing anywhere)
    assert measure(lambda: None)[1] == measure(lambda: None)[1]
    assert measure(lambda: None)[1].elements == 0


def test_results_propagate_through_chains():
    x = counted(np.arange(float(N)))

    def chain():
        y = np.exp(x * 0.001)
        z = y - np.mean(y)
        return np.sum(z * z)

    result, cost = measure(chain)
    assert cost.elements >= 3 * N + N + 3 * N + 3 * N + N  # every link charged, not only the first
    assert float(result) == pytest.approx(float(chain()))
    assert isinstance(np.exp(-x), CountedArray)
    assert isinstance(np.reshape(x, (10, 100)), CountedArray)


def test_out_arguments_keep_identity():
    x = counted(np.ones(N))
    assert np.add(x, x, out=x) is x
    y = x
    y += x
    assert y is x and x[0] == 4.0
    assert measure(lambda: np.add(x, x, out=x))[1].elements == 3 * N


def test_counted_and_uncounted_structures():
    Pair = namedtuple("Pair", "a b")
    base = np.arange(4.0)
    value = {"p": Pair(base, 1.0), "l": [base, (base, "s")], "n": None}
    c = counted(value)
    assert isinstance(c["p"], Pair) and isinstance(c["p"].a, CountedArray) and c["p"].b == 1.0
    assert isinstance(c["l"][0], CountedArray) and isinstance(c["l"][1][0], CountedArray) and c["l"][1][1] == "s"
    assert np.shares_memory(c["l"][0], base)
    u = uncounted(c)
    assert type(u["p"].a) is np.ndarray and type(u["l"][1][0]) is np.ndarray
    assert counted(c["p"].a) is c["p"].a


# ---------------------------------------------------------------------------------------------------------------------
# The point of it all: C-level work cannot hide


def dense_one_hots(x, n):
    g = np.zeros_like(x)
    for i in range(n):
        e = np.zeros_like(x)
        e[i] = 1.0
        g = g + e
    return g


def index_list_scatter(x, n):
    idx = []
    for i in range(n):
        idx.append(i)
    g = np.zeros_like(x)
    np.add.at(g, idx, 1.0)
    return g


def test_dense_one_hot_loop_is_quadratic_scatter_is_linear():
    sizes = (100, 200, 300)
    dense = [cost_of(lambda n=n: dense_one_hots(counted(np.ones(n)), n)) for n in sizes]
    sparse = [cost_of(lambda n=n: index_list_scatter(counted(np.ones(n)), n)) for n in sizes]
    n = sizes[0]

    # same answer
    np.testing.assert_array_equal(dense_one_hots(np.ones(n), n), index_list_scatter(np.ones(n), n))

    # opcodes alone are linear for both: the per-iteration work of the dense loop is inside C calls
    assert second_difference([c.opcodes for c in dense]) == 0
    assert second_difference([c.opcodes for c in sparse]) == 0

    # elements expose it: each dense iteration touches all n elements several times
    assert second_difference([c.total for c in dense]) >= 2 * n * n
    assert dense[1].total / dense[0].total > 3.5
    assert second_difference([c.total for c in sparse]) == 0
    assert sparse[1].total / sparse[0].total < 2.05
    assert dense[2].total > 20 * sparse[2].total
