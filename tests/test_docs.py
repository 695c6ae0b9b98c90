"""The README and the pages under docs/ show what chadpy prints today (generated parts are regenerated and
compared), their links lead somewhere, and the README stays a short front door."""

from __future__ import annotations

import ast
import glob
import importlib.util
import os
import re
import subprocess
import sys
import textwrap
import unicodedata

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


def _read(page: str) -> str:
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        return f.read()


# where each example's printed derivative is shown: the README's first example (and the site's home page),
# the closures example on the page about reading derivatives
SHOWN_IN = {"quickstart": ["README.md", "docs/index.md"], "closures": ["docs/derivatives.md"]}


@pytest.mark.slow  # 1.5 s each (the example script in a subprocess): the whole suite runs it, the subset leaves it
@pytest.mark.parametrize("example", sorted(SHOWN_IN))
def test_docs_show_the_derivative_chadpy_prints(example):
    printed = "```python\n" + _printed_derivative(example) + "```"
    for page in SHOWN_IN[example]:
        assert printed in _read(page), f"{page}'s derivative for examples/{example}.py is stale: paste what it prints"


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
def test_loops_show_what_chadpy_prints(name):
    """docs/derivatives.md's "Loops" section: the derivative shown after each loop is what chadpy prints for it."""
    import chadpy as chad

    blocks = _blocks(_read("docs/derivatives.md"), "python")
    at = next(k for k, b in enumerate(blocks) if b.startswith(f"def {name}(x, n):"))
    fn = load_function("import math\n\n\n" + blocks[at].replace(f"def {name}(", "def f("), "docs_loop")
    printed = chad.source(fn, 1.3, 5, annotate=False)  # of `f`: named as the page's function
    assert blocks[at + 1] == printed.replace("f_chad(", f"{name}_chad(").replace("f_bp", f"{name}_bp")


# ====================================================================== the README as a front door, the pages' links

PAGES = ["README.md", *sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))]

# the README's sections, in the order a new user reads them (other sections may come between them)
README_SECTIONS = ["A first example", "API", "What is supported", "How it compares", "Where to go next"]


def _headings(text: str) -> list[tuple[int, str]]:
    """(level, title) of each markdown heading outside fenced code blocks."""
    found, inside = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = not inside
        elif not inside and (m := re.match(r"(#{1,6}) (.*)", line)):
            found.append((len(m.group(1)), m.group(2).strip()))
    return found


def test_readme_is_short_and_in_order():
    """A new user reads it in one go: what chadpy is, the two commands, a first example, the API, a short list
    of what is supported, how it compares, where to go next. The rest lives under docs/."""
    readme = _read("README.md")
    assert len(readme.splitlines()) < 400, "README.md is getting long: move the detail to a page under docs/"
    headings = _headings(readme)
    assert headings[0] == (1, "chadpy")
    sections = [title for level, title in headings if level == 2]
    assert [t for t in sections if t in README_SECTIONS] == README_SECTIONS, sections
    intro = readme.split("\n## ", 1)[0]  # before the first section: the two commands, with the test command CI runs
    assert "python examples/quickstart.py" in intro
    assert 'python -m pip install -q -e ".[test]" && python -m pytest -q' in intro
    supported = readme.split("\n## What is supported\n", 1)[1].split("\n## ", 1)[0]
    assert len(re.findall(r"^- ", supported, re.M)) <= 12, "the full list is docs/language.md's"
    assert "(docs/language.md)" in supported


def _table(text: str, header: str) -> list[str]:
    """The rows of the markdown table whose header row starts with `header`."""
    lines = text.splitlines()
    at = next(k for k, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[at:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def test_readme_tables_are_the_pages_tables():
    """The README's API table is docs/api.md's, and its benchmark table docs/benchmarks.md's."""
    readme = _read("README.md")
    assert _table(readme, "| call |") == _table(_read("docs/api.md"), "| call |")
    header = "| workload | hand-written |"
    assert _table(readme, header) == _table(_read("docs/benchmarks.md"), header)


def _slugs(text: str) -> set[str]:
    """The anchors of a page's headings, as GitHub and as MkDocs (Python-Markdown's toc) spell them."""
    slugs = set()
    for _, title in _headings(text):
        plain = re.sub(r"[`*]|\[([^]]*)\]\([^)]*\)", lambda m: m.group(1) or "", title)
        github = re.sub(r"[^\w\- ]", "", plain.lower()).replace(" ", "-")
        ascii_title = unicodedata.normalize("NFKD", plain).encode("ascii", "ignore").decode()
        mkdocs = re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", ascii_title).strip().lower())
        slugs |= {github, mkdocs}
    return slugs


def _links(text: str) -> list[str]:
    """The targets of a markdown text's links and images, outside code (fenced blocks and inline spans)."""
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    return re.findall(r"\]\(([^)\s]+)\)", prose)


@pytest.mark.parametrize("page", PAGES)
def test_relative_links_lead_to_files_and_headings(page):
    """Every relative link of the README and of docs/*.md names a file of the repository, and an anchor names a
    heading of its page (MkDocs' strict build checks the pages as the site has them; this checks them as read in
    the repository, the README too)."""
    text = _read(page)
    targets = _links(text)
    assert targets or page != "README.md"
    for target in targets:
        if re.match(r"[a-z]+:", target):  # a URL
            continue
        path, _, anchor = target.partition("#")
        file = os.path.normpath(os.path.join(ROOT, os.path.dirname(page), path)) if path else os.path.join(ROOT, page)
        assert os.path.isfile(file), f"{page}: the link {target!r} leads to no file"
        if anchor and file.endswith(".md"):
            with open(file, encoding="utf-8") as f:
                assert anchor in _slugs(f.read()), f"{page}: the link {target!r} names no heading of its page"


@pytest.mark.parametrize("page", PAGES)
def test_python_blocks_are_python(page):
    """Every ```python block of the README and the pages parses (one that is an entry of a dict, as design.md's
    registration of np.cumsum is, parses inside braces)."""
    for block in _blocks(_read(page), "python"):
        code = textwrap.dedent(block)
        try:
            ast.parse(code)
        except SyntaxError:
            ast.parse("{\n" + code + "}")


@pytest.mark.parametrize("page", PAGES)
def test_no_angle_brackets_in_prose(page):
    """A `<` before a letter outside code is an HTML tag to a markdown renderer, which drops it and what it
    encloses (`<jvp(v), w>` vanished from the site): write ⟨ ⟩, or put it in backticks. HTML comments may stay."""
    prose = re.sub(r"```.*?```|<!--.*?-->", "", _read(page), flags=re.S)
    for line in prose.splitlines():
        assert not re.search(r"<[A-Za-z/!]", re.sub(r"`[^`]*`", "", line)), f"{page}: {line!r}"
