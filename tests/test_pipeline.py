"""The pipeline as data: every pass listed in the order it runs, and the program printable after each
(`chad.source(f, *args, after=NAME)`, `python -m chadpy show ... --after NAME`, `python -m chadpy passes`)."""

import ast
import contextlib
import io
import math

import numpy as np
import pytest

import chadpy as chad
from chadpy.__main__ import main
from chadpy.pipeline import FRONT_END, PASSES

NAMES = [p.name for p in PASSES]


class Box:
    def __init__(self, v):
        self.v = v

    def __enter__(self):
        return self.v

    def __exit__(self, *exc):
        return False


def program(x, n):
    """Every front-end rewrite has work here: a `with`, an element assignment, a copy and a view."""
    buf = np.zeros(n)
    alias = buf
    for i in range(n):
        buf[i] = math.sin(x * i)
    row = alias[1:]
    row[0] += x
    with Box(x) as y:
        total = np.sum(buf) * y
    return total


def _printed(after):
    return chad.source(program, 0.7, 3, after=after)


def test_the_passes_are_listed_once_each_in_the_order_they_run():
    assert len(set(NAMES)) == len(NAMES)
    front = [
        "read",
        "local_state",
        "as_written",
        "fence",
        "with_blocks",
        "tries",
        "element_assignments",
        "follow_copies",
        "follow_views",
        "lower",
        "verify",
    ]
    assert NAMES[: len(FRONT_END)] == front
    assert NAMES.index("infer") < NAMES.index("chad") < NAMES.index("fuse") < NAMES.index("lift")
    assert NAMES[-1] == "codegen"
    assert all(p.doc and p.doc.endswith(".") for p in PASSES)


def test_the_command_line_lists_the_passes():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["passes"]) == 0
    lines = out.getvalue().splitlines()
    assert [line.split()[0] for line in lines] == NAMES
    assert all(p.doc in line for p, line in zip(PASSES, lines))


@pytest.mark.parametrize("after", ["read", "fence", "with_blocks", "element_assignments", "follow_copies"])
def test_the_source_after_each_rewrite_computes_what_the_function_computes(after):
    """The rewritten gast, printed, is Python that gives the function's value (the rewrites keep it;
    `follow_views` writes `__written_back__`, which only chadpy's rules define)."""
    text = _printed(after)
    namespace = {"np": np, "math": math, "Box": Box}
    exec(compile(text, "<after>", "exec"), namespace)
    assert namespace["program"](0.7, 3) == pytest.approx(program(0.7, 3), abs=0, rel=1e-15)
    assert ("__enter__" in text) == (NAMES.index(after) >= NAMES.index("with_blocks"))
    assert ("__setitem__" in text) == (NAMES.index(after) >= NAMES.index("element_assignments"))


def test_views_give_their_writes_back_before_the_base_is_read():
    text = _printed("follow_views")
    assert "buf.__written_back__(row, 'index', slice(1, None, None))" in text
    assert text.index("__written_back__") < text.index("np.sum(buf)")


def test_the_ir_after_lowering_is_in_let_form():
    lowered, verified = _printed("lower"), _printed("verify")
    assert lowered == verified
    assert lowered.startswith("def program(x, n):") and "let " in lowered and "loop for i" in lowered


def test_after_inference_every_binder_has_its_type():
    assert _printed("infer") == chad.source(program, 0.7, 3, stage="ir")


@pytest.mark.parametrize("after", NAMES[NAMES.index("chad") :])
def test_the_target_program_after_each_pass_is_python(after):
    ast.parse(_printed(after))


def test_the_passes_change_the_program_where_they_say():
    chad_ = _printed("chad")
    assert "acc.one(" in chad_ and "acc.one(" not in _printed("localize")  # slots become locals
    assert "_bp(d, acc)" in _printed("hoist") and "_bp(d, acc)" not in _printed("inline")  # inlined
    assert "    def program_bp_1(d):" in _printed("release")  # a closure, until lifted
    assert "\ndef program_bp(saved_2, d):" in _printed("lift")


def test_after_the_last_pass_is_the_derivative():
    assert _printed("codegen") == chad.source(program, 0.7, 3)


def test_an_unknown_pass_is_a_clear_error():
    with pytest.raises(chad.ChadError, match="unknown pass 'fusion'; the passes are read, local_state, as_written"):
        chad.source(program, 0.7, 3, after="fusion")


@pytest.mark.parametrize("after", NAMES)
def test_the_command_line_shows_the_program_after_each_pass(after, tmp_path):
    path = tmp_path / "loop.py"
    lines = ["import math", "", "", "def f(x, n):", "    s = 0.0", "    for i in range(n):"]
    path.write_text("\n".join([*lines, "        s = s + math.sin(x * i)", "    return s", ""]))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["show", f"{path}:f", "0.5", "4", "--after", after]) == 0
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    assert out.getvalue().rstrip("\n") == chad.source(namespace["f"], 0.5, 4, after=after).rstrip("\n")
