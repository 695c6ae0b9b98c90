"""The four stages through the public API: the same gradients, code that differs only where the paper says.

Every finite-difference test of the corpus already runs at all four stages (fd.MODES);
these check the API surface and the shape of the generated code.
"""

from __future__ import annotations

import math

import pytest

import chadpy as chad


def poly(x, y):
    z = x * y
    if z > 0.0:
        w = math.sin(z)
    else:
        w = z * z
    t = (w, x)
    s = 0.0
    for i in range(3):
        s = s + t[0] * i + t[1]
    return s + w


def test_fig7_stages_differ_only_in_the_accumulator_class():
    efficient = chad.source(poly, 0.5, 2.0, simplify=False)
    monadic = chad.source(poly, 0.5, 2.0, stage="monadic")
    assert "EArr(" in efficient and "PersistentEnv" not in efficient
    assert monadic == efficient.replace("EArr(", "PersistentEnv(")


def test_fig2_stages_differ_only_in_the_vector_class_and_dense_tuples():
    sparse = chad.source(poly, 0.5, 2.0, stage="sparse")
    naive = chad.source(poly, 0.5, 2.0, stage="naive")
    assert "SparseEV.plus(" in sparse and "acc" not in sparse  # vectors returned, no accumulator
    assert "return ev" in sparse
    assert "dense_one_hot(tuple_type" in naive  # Fig. 4: the projection t[0]'s one-hot built in full
    for a, b in zip(sparse.splitlines(), naive.splitlines(), strict=True):
        if a != b:
            assert a.replace("SparseEV", "DenseEV") == b or "dense_" in b or "dense one-hot" in b, (a, b)


def test_annotations_name_rules_and_slots():
    text = chad.source(poly, 0.5, 2.0, simplify=False)
    assert "# D[let z = mul(x, y)]: Dop^t of mul" in text
    assert "scopes z=2" in text  # the block's scopes and their slots
    assert "(slots x=0, y=1)" in text  # the parameters' slots, on run
    assert "#" not in chad.source(poly, 0.5, 2.0, simplify=False, annotate=False)


@pytest.mark.parametrize("stage", list(chad.STAGES))
def test_every_entry_point_takes_a_stage(stage):
    expected = chad.grad(poly, argnums=(0, 1))(0.5, 2.0)
    assert chad.grad(poly, argnums=(0, 1), stage=stage)(0.5, 2.0) == pytest.approx(expected, rel=1e-12)
    value, g = chad.value_and_grad(poly, stage=stage)(0.5, 2.0)
    assert value == poly(0.5, 2.0) and g == pytest.approx(expected[0], rel=1e-12)
    out, pullback = chad.vjp(poly, 0.5, 2.0, stage=stage)
    assert pullback(2.0) == pytest.approx(tuple(2 * e for e in expected), rel=1e-12)
    f = chad.reverse(stage=stage)(poly)
    assert f.grad(0.5, 2.0) == pytest.approx(expected, rel=1e-12)
    assert f.source == chad.source(poly, stage=stage)


def test_unknown_stage_is_a_chad_error():
    with pytest.raises(chad.ChadError, match="unknown stage 'fast'.*naive, sparse, monadic, efficient"):
        chad.grad(poly, stage="fast")(0.5, 2.0)
    with pytest.raises(chad.ChadError, match="unknown stage"):
        chad.reverse(stage="fast")


def test_cost_report_needs_a_float_output_or_a_cotangent():
    def pair(x):
        return (x, 2.0 * x)

    with pytest.raises(chad.ChadTypeError, match="scalar float output"):
        chad.cost_report(pair, 1.0)
    report = chad.cost_report(pair, 1.0, ct=(1.0, 1.0))
    assert report.derivative.total > report.primal.total > 0
