"""docs/teaching.md and the README show what chadpy prints today (generated parts are regenerated and compared)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import pytest

from tests.support.paths import ROOT
from tests.support.sources import load_function


def _updater():
    spec = importlib.util.spec_from_file_location("teaching_update", os.path.join(ROOT, "docs", "teaching_update.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _numbers(line: str) -> list[float]:
    return [float(x) for x in re.findall(r"\d+(?:\.\d+)?", line)]


@pytest.mark.slow  # 12 s: the whole suite runs it, the development subset leaves it
def test_teaching_page_matches_the_code():
    """Generated code exactly; measured costs within 10% (instruction counts differ a little
    between CPython versions; the page says they are from 3.11)."""
    with open(os.path.join(ROOT, "docs", "teaching.md")) as f:
        page = f.read()
    fresh = _updater().render(page)
    assert len(fresh.splitlines()) == len(page.splitlines())
    for k, (now, shown) in enumerate(zip(fresh.splitlines(), page.splitlines()), 1):
        if now.startswith("| ") and _numbers(now) and not now.startswith("| stage"):
            assert re.sub(r"[\d.]+", "#", now) == re.sub(r"[\d.]+", "#", shown), f"line {k}"
            for a, b in zip(_numbers(now), _numbers(shown)):
                assert abs(a - b) <= 0.1 * abs(a), f"docs/teaching.md line {k}: shows {shown!r}, now {now!r}"
        else:
            assert now == shown, f"docs/teaching.md line {k} is stale: run python docs/teaching_update.py"


def test_the_plot_exists():
    path = os.path.join(ROOT, "docs", "cost-ratios.png")
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def _printed_derivative(example: str) -> str:
    """The derivative an example script prints (after its "simplified form" heading)."""
    path = os.path.join(ROOT, "examples", f"{example}.py")
    out = subprocess.run([sys.executable, path], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    lines = []
    for line in out.split("(simplified form):\n\n", 1)[1].splitlines():
        if line and not line.startswith((" ", "#", "def ")):
            break  # what the script prints after the source
        lines.append(line)
    return "\n".join(lines).rstrip() + "\n"


@pytest.mark.slow  # 1.5 s each (the example script in a subprocess): the whole suite runs it, the subset leaves it
@pytest.mark.parametrize("example", ["quickstart", "closures"])
def test_readme_shows_the_derivative_chadpy_prints(example):
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    assert "```python\n" + _printed_derivative(example) + "```" in readme, (
        f"README's derivative for examples/{example}.py is stale: paste what the script prints"
    )


def _blocks(text: str, lang: str) -> list[str]:
    """The fenced code blocks of a markdown text whose fence names `lang` ("" for none)."""
    blocks, current, inside = [], [], None
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            if inside is None:
                inside, current = line[3:].strip(), []
            else:
                if inside == lang:
                    blocks.append("".join(current))
                inside = None
        elif inside is not None:
            current.append(line)
    return blocks


def test_design_page_shows_the_code_it_describes():
    """docs/design.md's typed IR is what chadpy prints, and its desugaring example is the rule itself."""
    import inspect

    import numpy as np

    import chadpy as chad
    from chadpy.lower import desugar

    with open(os.path.join(ROOT, "docs", "design.md")) as f:
        page = f.read()
    blocks = _blocks(page, "python")
    example = blocks[0]
    assert inspect.getsource(desugar.map_) in blocks
    f = load_function("import numpy as np\n\n" + example, "design_example")
    printed = chad.source(f, 1.0, np.ones((2, 2)), stage="ir")
    shown = [b for b in _blocks(page, "") if b.startswith("# f_chad")]
    assert shown == [printed]


def test_design_pages_worked_primitive_is_the_code_in_its_two_files():
    """docs/design.md's `np.cumsum` is what chadpy registers: its kind rule and registration as they stand
    in rules/reductions.py, its run-time half as it stands in runtime/reductions.py."""
    import inspect

    from chadpy.rules import reductions
    from chadpy.runtime import reductions as runtime

    with open(os.path.join(ROOT, "docs", "design.md")) as f:
        blocks = _blocks(f.read(), "python")
    registration = next(b for b in blocks if b.lstrip().startswith("np.cumsum: _np("))
    assert registration in inspect.getsource(reductions)
    assert inspect.getsource(reductions.cumulative_kind) in blocks
    assert inspect.getsource(runtime.cumsum_ct) in blocks  # with its decorator


def test_design_pages_new_primitive_is_one_line():
    """The registration docs/design.md shows is all a new function needs: chadpy differentiates it
    (numbers and broadcasting arrays) right away. The registry is restored afterwards."""
    import math

    import numpy as np

    from chadpy.rules import registry as primitives
    from tests.support.fd import assert_grad_matches_fd

    with open(os.path.join(ROOT, "docs", "design.md")) as f:
        (line,) = [b for b in _blocks(f.read(), "python") if b.startswith("pointwise(")]
    saved = dict(primitives.PRIMITIVES)
    f = load_function(
        "import math\nimport numpy as np\n\n\ndef f(x, a):\n    return math.asinh(x) * np.sum(np.arcsinh(a * x))\n",
        "asinh_user",
    )
    try:
        del primitives.PRIMITIVES[math.asinh], primitives.PRIMITIVES[np.arcsinh]  # registered by the line itself
        exec(line, {"pointwise": primitives.pointwise, "math": math, "np": np})
        assert_grad_matches_fd(f, (0.7, np.array([[0.5, -1.0], [2.0, 0.25]])), argnums=(0, 1))
    finally:
        primitives.PRIMITIVES.clear()
        primitives.PRIMITIVES.update(saved)


@pytest.mark.parametrize("name", ["g", "f"])
def test_readme_loops_show_what_chadpy_prints(name):
    """The README's "Loops" section: the derivative shown after each loop is what chadpy prints for it."""
    import chadpy as chad

    with open(os.path.join(ROOT, "README.md")) as f:
        blocks = _blocks(f.read(), "python")
    at = next(k for k, b in enumerate(blocks) if b.startswith(f"def {name}(x, n):"))
    fn = load_function("import math\n\n\n" + blocks[at].replace(f"def {name}(", "def f("), "readme_loop")
    printed = chad.source(fn, 1.3, 5, annotate=False)  # of `f`: named as the README's function
    assert blocks[at + 1] == printed.replace("f_chad(", f"{name}_chad(").replace("f_bp", f"{name}_bp")
