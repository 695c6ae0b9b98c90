"""Golden files: the derivative chadpy prints for representative functions (`golden_cases.py`),
kept in tests/golden/<case>.py, so that every change to the generated code shows in review.

Each case's gradient is also checked against finite differences, in every stage, so a golden file
is known to be right, not only unchanged. After an intended change, regenerate them with

    CHAD_UPDATE_GOLDEN=1 python -m pytest tests/backend/test_golden.py

and read the diff.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import os
import re

import pytest

import chadpy as chad
from chadpy.names import reserved
from tests.backend.golden_cases import CASES
from tests.support.fd import assert_grad_matches_fd

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
UPDATE = bool(os.environ.get("CHAD_UPDATE_GOLDEN"))


@pytest.mark.parametrize("case", list(CASES))
def test_the_derivative_reads_as_the_golden_file(case):
    fn, args, _ = CASES[case]
    text = chad.source(fn, *args)
    path = os.path.join(GOLDEN, f"{case}.py")
    if UPDATE:
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        golden = f.read()
    diff = "".join(difflib.unified_diff(golden.splitlines(True), text.splitlines(True), path, "chadpy.source"))
    assert text == golden, f"the derivative of {case} changed (CHAD_UPDATE_GOLDEN=1 accepts it):\n{diff}"


@pytest.mark.parametrize("case", list(CASES))
def test_the_golden_derivative_is_right(case):
    fn, args, argnums = CASES[case]
    assert_grad_matches_fd(fn, args, argnums)


def test_every_golden_file_has_a_case():
    files = {name.removesuffix(".py") for name in os.listdir(GOLDEN) if name.endswith(".py")}
    assert files == set(CASES)


@pytest.mark.parametrize("case", list(CASES))
def test_no_temporary_shadows_a_builtin_or_a_helper(case):
    fn, args, _ = CASES[case]
    tree = ast.parse(chad.source(fn, *args))
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) for a in n.args.args}
    users = {n.id for n in ast.walk(ast.parse(inspect.getsource(fn))) if isinstance(n, ast.Name)}
    assert (bound - users) & reserved() == set()


@pytest.mark.parametrize("case", list(CASES))
def test_no_empty_branch(case):
    fn, args, _ = CASES[case]
    assert not re.search(r":(  #[^\n]*)?\n\s+pass\n", chad.source(fn, *args))
