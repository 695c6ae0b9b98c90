"""Regenerate the generated parts of docs/teaching.md from what chadpy prints today.

The document marks each generated part with an HTML comment naming what it shows:

    <!-- generated: source STAGE [unsimplified] [fill] -->   a ```python block: chadpy.source(f, stage=STAGE)
                                                      (of `fill` on a 5-vector and 0.9 if named)
    <!-- generated: costs -->                          a table: cost_report(f, 1.5, 2.0) per stage
    <!-- generated: scaling FAMILY -->                 a table: the family's derivative/primal ratio per n and stage

and the part that follows (the fenced block or the table) is replaced.
Usage: python docs/teaching_update.py [--check]   (--check: exit 1 if the file is stale)
"""

from __future__ import annotations

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path[:0] = [os.path.join(ROOT, "examples"), ROOT]  # the examples; the tests package, for its cost families

import chadpy as chad  # noqa: E402

DOC = os.path.join(HERE, "teaching.md")
STAGES = list(chad.STAGES)
SCALING_NS = [16, 64, 256]
_MARKER = re.compile(r"<!-- generated: (.*?) -->\n")
_PART = re.compile(r"(```python\n.*?```\n|(?:\|[^\n]*\|\n)+)", re.S)  # a fenced block or a table


def _source(args: list[str]) -> str:
    import numpy as np
    from teaching import f, fill

    stage, simplify = args[0], "unsimplified" not in args
    example = (fill, np.linspace(0.1, 0.5, 5), 0.9) if "fill" in args else (f,)
    return f"```python\n{chad.source(*example, stage=stage, simplify=simplify).rstrip()}\n```\n"


def _costs() -> str:
    from teaching import f

    rows = ["| stage | primal | derivative | ratio |", "| --- | ---: | ---: | ---: |"]
    for stage in STAGES:
        r = chad.cost_report(f, 1.5, 2.0, stage=stage)
        rows.append(f"| {stage} | {r.primal.total} | {r.derivative.total} | {r.ratio:.1f} |")
    return "\n".join(rows) + "\n"


def _scaling(family: str) -> str:
    from tests.support.cost_families import measure

    rows = ["| stage | " + " | ".join(f"n = {n}" for n in SCALING_NS) + " |", "| --- |" + " ---: |" * len(SCALING_NS)]
    for stage in STAGES:
        ratios = [measure(family, n, stage).ratio for n in SCALING_NS]
        rows.append(f"| {stage} | " + " | ".join(f"{r:.1f}" for r in ratios) + " |")
    return "\n".join(rows) + "\n"


def generated(what: str) -> str:
    kind, *args = what.split()
    return {"source": lambda: _source(args), "costs": _costs, "scaling": lambda: _scaling(args[0])}[kind]()


def render(text: str) -> str:
    """The document with every generated part replaced by what chadpy produces now."""
    out, pos = [], 0
    for marker in _MARKER.finditer(text):
        part = _PART.match(text, marker.end())
        if part is None:
            raise ValueError(f"no fenced block or table after {marker.group(0)!r}")
        out += [text[pos : marker.end()], generated(marker.group(1))]
        pos = part.end()
    return "".join(out) + text[pos:]


def main() -> int:
    with open(DOC) as f:
        text = f.read()
    new = render(text)
    if "--check" in sys.argv:
        if new != text:
            print("docs/teaching.md is stale: run python docs/teaching_update.py")
            return 1
        return 0
    with open(DOC, "w") as f:
        f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
