"""Where a `ChadError` points: its message names the function's file and the line, with its number."""

import inspect
import re


def expected_locations(fn, *line_texts: str) -> list[tuple[int, str]]:
    """(absolute line number, stripped text) of each given line of fn's source."""
    lines, first = inspect.getsourcelines(fn)
    out = []
    for text in line_texts:
        offsets = [k for k, line in enumerate(lines) if line.strip() == text]
        assert len(offsets) == 1, f"{text!r} must occur exactly once in {fn.__name__}"
        out.append((first + offsets[0], text))
    return out


def assert_located(message: str, fn, *line_texts: str) -> None:
    """The message shows fn's file and one of the given lines: its number and its text."""
    filename = inspect.getsourcefile(fn)
    assert filename in message, f"file name {filename!r} missing from:\n{message}"
    found = [
        (lineno, text)
        for lineno, text in expected_locations(fn, *line_texts)
        if re.search(rf"\bline {lineno}\b", message) and text in message
    ]
    assert found, f"none of {expected_locations(fn, *line_texts)} shown in:\n{message}"
