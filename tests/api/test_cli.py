"""The command line, `python -m chadpy show|cost` (chadpy/__main__.py)."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import chadpy
from chadpy.__main__ import main, parse_arg

EXAMPLE = """\
import math

import numpy as np

import chadpy
from cli_test_sibling import square


def f(x, y):
    z = x * y
    return math.sin(z) + x


@chadpy.reverse
def g(x):
    return square(x) + 1.0


def norm2(w):
    return np.sum(w * w)


def total(xs):
    t = 0.0
    for x in xs:
        t = t + x * x
    return t


def uses_global(x):
    global counter
    counter = x
    return x * counter  # `counter` read back would carry no derivative: refused


def uses_yield(x):
    y = x * 2.0
    yield y


not_a_function = 3.0
"""


@pytest.fixture
def example(tmp_path: Path) -> Path:
    (tmp_path / "cli_test_sibling.py").write_text("def square(x):\n    return x * x\n")
    path = tmp_path / "example.py"
    path.write_text(EXAMPLE)
    return path


def load(path: Path, name: str):
    """The function `name` of the file, loaded independently of the command line."""
    spec = importlib.util.spec_from_file_location(f"cli_test_{name}_{id(path)}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return getattr(module, name)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


# --- show ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("options", [[], ["--stage", "naive"], ["--stage", "monadic", "--plain"], ["--no-simplify"]])
def test_show_prints_the_library_source(example, capsys, options):
    status, out, err = run(capsys, "show", f"{example}:f", *options)
    stage = options[options.index("--stage") + 1] if "--stage" in options else "efficient"
    expected = chadpy.source(
        load(example, "f"), stage=stage, annotate="--plain" not in options, simplify="--no-simplify" not in options
    )
    assert (status, out, err) == (0, expected, "")
    assert "def f_chad(x, y):" in out


def test_show_with_example_arguments(example, capsys):
    status, out, _ = run(capsys, "show", f"{example}:norm2", "np.arange(3.0)", "--plain")
    assert status == 0
    assert out == chadpy.source(load(example, "norm2"), np.arange(3.0), annotate=False)
    assert "np.sum" in out


def test_show_plain_has_no_comments(example, capsys):
    _, annotated, _ = run(capsys, "show", f"{example}:f", "--stage", "naive")
    _, plain, _ = run(capsys, "show", f"{example}:f", "--stage", "naive", "--plain")
    assert "#" in annotated
    assert "#" not in plain
    assert plain.splitlines()[0] == "def f_chad(x, y):"


def test_show_unwraps_reverse_and_imports_siblings(example, capsys):
    path_before = list(sys.path)
    status, out, _ = run(capsys, "show", f"{example}:g", "--plain")
    assert sys.path == path_before
    g = load(example, "g")
    assert isinstance(g, chadpy.Reverse)
    assert status == 0
    assert out == chadpy.source(g.__chad_wrapped__, annotate=False)
    assert "def square_chad(x):" in out


def test_show_diff(example, capsys):
    status, out, _ = run(capsys, "show", f"{example}:f", "--diff", "monadic", "--no-simplify")
    assert status == 0
    lines = out.splitlines()
    assert lines[:2] == ["--- efficient", "+++ monadic"]
    removed = [line for line in lines[2:] if line.startswith("-")]
    added = [line for line in lines[2:] if line.startswith("+")]
    # unsimplified, the two stages differ only in the accumulator class
    assert len(removed) == len(added) == 1
    assert "EArr(" in removed[0] and "PersistentEnv(" in added[0]
    assert removed[0].replace("EArr", "PersistentEnv")[1:] == added[0][1:]


def test_show_diff_of_a_stage_with_itself_is_empty(example, capsys):
    assert run(capsys, "show", f"{example}:f", "--stage", "naive", "--diff", "naive") == (0, "", "")


def test_show_side_by_side(example, capsys):
    status, out, _ = run(capsys, "show", f"{example}:f", "--diff", "monadic", "--side-by-side", "--no-simplify")
    assert status == 0
    lines = out.splitlines()
    assert re.fullmatch(r"efficient +\| monadic", lines[0])
    assert all(" |" in line for line in lines)  # a blank right side: the rule, no trailing space
    assert len({line.index(" |") for line in lines}) == 1  # one column boundary
    efficient = chadpy.source(load(example, "f"), simplify=False).splitlines()
    assert len(lines) == 2 + len(efficient)  # header, rule, one row per line
    assert any("EArr(" in line and "PersistentEnv(" in line for line in lines)


def test_side_by_side_needs_diff(example, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["show", f"{example}:f", "--side-by-side"])
    assert exit_info.value.code == 2
    assert "--side-by-side needs --diff" in capsys.readouterr().err


# --- cost ---------------------------------------------------------------------------------------------------------


def numbers(line: str) -> list[str]:
    return line.split()[1:]


def test_cost_matches_cost_report(example, capsys):
    status, out, _ = run(capsys, "cost", f"{example}:f", "1.5", "2.0")
    report = chadpy.cost_report(load(example, "f"), 1.5, 2.0)
    lines = out.splitlines()
    assert status == 0
    assert "stage efficient" in lines[0]
    assert lines[1].split() == ["instructions", "elements", "total"]
    assert numbers(lines[2]) == [str(report.primal.opcodes), str(report.primal.elements), str(report.primal.total)]
    d = report.derivative
    assert numbers(lines[3]) == [str(d.opcodes), str(d.elements), str(d.total)]
    assert numbers(lines[4]) == [f"{report.ratio:.2f}"]


@pytest.mark.parametrize(
    ("name", "arg", "value"),
    [("total", "[1.0, 2.0]", [1.0, 2.0]), ("norm2", "np.ones(3)", np.ones(3))],
)
def test_cost_parses_lists_and_arrays(example, capsys, name, arg, value):
    status, out, _ = run(capsys, "cost", f"{example}:{name}", arg, "--stage", "sparse")
    report = chadpy.cost_report(load(example, name), value, stage="sparse")
    lines = out.splitlines()
    assert status == 0
    assert "stage sparse" in lines[0]
    assert numbers(lines[2])[-1] == str(report.primal.total)
    assert numbers(lines[3])[-1] == str(report.derivative.total)
    assert numbers(lines[4]) == [f"{report.ratio:.2f}"]


def test_cost_at_every_stage(example, capsys):
    status, out, _ = run(capsys, "cost", f"{example}:f", "1.5", "2.0", "--stage", "all")
    assert status == 0
    rows = out.splitlines()[2:]
    assert [row.split()[0] for row in rows] == ["naive", "sparse", "monadic", "efficient"]
    f = load(example, "f")
    for row in rows:
        report = chadpy.cost_report(f, 1.5, 2.0, stage=row.split()[0])
        assert numbers(row) == [str(report.primal.total), str(report.derivative.total), f"{report.ratio:.2f}"]


def test_parse_arg():
    assert parse_arg("1.5") == 1.5
    assert parse_arg("(1.0, [2, 3])") == (1.0, [2, 3])
    assert parse_arg("{'a': 1.0}") == {"a": 1.0}
    assert parse_arg("math.pi / 2") == pytest.approx(1.5707963267948966)
    array = parse_arg("np.ones(3)")
    assert isinstance(array, np.ndarray) and array.tolist() == [1.0, 1.0, 1.0]


# --- errors -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("missing.py:f", "no such file: missing.py"),
        ("{example}:nope", "has no function 'nope'"),
        ("{example}:not_a_function", "is not a Python function"),
        ("{example}", "expected FILE.py:FUNC"),
        ("{example}:uses_global", "reads `x`, which carries a derivative here"),
        ("{example}:uses_yield", "`yield` (generators) is not supported"),
    ],
)
def test_errors_exit_2_without_traceback(example, capsys, target, message):
    status, out, err = run(capsys, "show", target.format(example=example))
    assert status == 2
    assert out == ""
    assert err.startswith("chadpy: error: ") and message in err
    assert "Traceback" not in err


def test_chad_error_shows_its_location(example, capsys):
    _, _, err = run(capsys, "cost", f"{example}:uses_yield", "1.0")
    assert f'File "{example}", line ' in err and "in uses_yield" in err


def test_wrong_number_of_arguments(example, capsys):
    assert run(capsys, "cost", f"{example}:f", "1.0") == (2, "", "chadpy: error: f: missing a required argument: 'y'\n")


@pytest.mark.parametrize(
    "argv",
    [["cost", "f.py:f", "undefined_name"], ["show", "f.py:f", "--stage", "fast"], ["cost", "f.py:f"]],
)
def test_usage_errors_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "usage: python -m chadpy" in capsys.readouterr().err


def test_no_command_prints_help(capsys):
    status, out, err = run(capsys)
    assert (status, out) == (2, "")
    assert "usage: python -m chadpy" in err and "show" in err and "cost" in err


# --- end to end ---------------------------------------------------------------------------------------------------


@pytest.mark.slow  # 3 s (two interpreters start): the whole suite runs it, the development subset leaves it
def test_subprocess(example):
    done = subprocess.run(
        [sys.executable, "-m", "chadpy", "show", f"{example}:f", "--stage", "sparse"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == chadpy.source(load(example, "f"), stage="sparse")

    failed = subprocess.run(
        [sys.executable, "-m", "chadpy", "show", f"{example}:uses_global"], capture_output=True, text=True, check=False
    )
    assert failed.returncode == 2 and failed.stdout == ""
    assert "reads `x`, which carries a derivative here" in failed.stderr and "Traceback" not in failed.stderr
