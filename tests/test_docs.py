"""docs/teaching.md shows what chadpy prints today (its generated parts are regenerated and compared)."""

from __future__ import annotations

import importlib.util
import os
import re

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def _updater():
    spec = importlib.util.spec_from_file_location("teaching_update", os.path.join(ROOT, "docs", "teaching_update.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _numbers(line: str) -> list[float]:
    return [float(x) for x in re.findall(r"\d+(?:\.\d+)?", line)]


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
