"""MkDocs hook: a page may show a file kept elsewhere in the repository, such as the benchmark's plot
`benchmarks/results.png`, by the relative link that works where the page is read in the repository
(`../benchmarks/results.png`). MkDocs sees only docs/, so each such file (not a markdown page: link those
by their path in code formatting) is copied into the site under `repository/` and the link pointed there.
A link to a file that does not exist is left as it is, for `mkdocs build --strict` to report.
Pages are at the top of docs/ (the links are rewritten for that place)."""

from __future__ import annotations

import os
import re

from mkdocs.structure.files import File

_OUTSIDE = re.compile(r"\]\(\.\./([^)\s#]+)")  # the target of a link or image starting with ../
_COPIED = "repository/"


def _root(config) -> str:
    return os.path.dirname(os.path.abspath(config["docs_dir"]))


def _copied(root: str, path: str) -> bool:
    return not path.endswith(".md") and os.path.isfile(os.path.join(root, path))


def on_files(files, config):
    root, docs = _root(config), config["docs_dir"]
    paths = set()
    for name in os.listdir(docs):
        if name.endswith(".md"):
            with open(os.path.join(docs, name), encoding="utf-8") as f:
                paths.update(m.group(1) for m in _OUTSIDE.finditer(f.read()))
    for path in sorted(p for p in paths if _copied(root, p)):
        files.append(File.generated(config, _COPIED + path, abs_src_path=os.path.join(root, path)))
    return files


def on_page_markdown(markdown, page, config, files):
    root = _root(config)
    return _OUTSIDE.sub(lambda m: "](" + _COPIED + m.group(1) if _copied(root, m.group(1)) else m.group(0), markdown)
