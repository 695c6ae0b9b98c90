"""The package's modules form layers: each imports only modules listed before it here
(docs/design.md, "Layers"). Every import counts, those under `if TYPE_CHECKING:` and inside
functions too, so no two modules import each other in a circle, even for type hints.

The stages are folders, lowest first; inside a folder, its modules lowest first.
"""

import ast
import functools
import pathlib

import chadpy

STAGES = {
    "errors": [""],  # what every stage raises
    "names": [""],  # fresh names
    "texts": [""],  # the texts chadpy compiles, in linecache while their code lives
    # what the generated code calls; nothing of the compiler
    "runtime": [
        "",
        "facts",  # what the optimiser may assume of a runtime function, marked where it is defined
        "cotangents",
        "closures",
        "records",
        "scalar",
        "sequences",
        "pointwise",
        "tangents",
        "arrays",
        "array_cotangents",
        "cost",
        "environments",
        "numpy",
        "reductions",
        "linalg",
        "shape",
        "special",
        "writes",
    ],
    # the generated code's language, in which rules are written
    "target": ["", "expressions", "statements"],
    # the core IR: which objects are records, the types of values, the nodes, the checker
    "ir": ["", "records", "types", "nodes", "verify"],
    # the rules: kind rules, the registry, then one file per family
    "rules": [
        "kinds",
        "registry",
        "tangents",
        "linalg",
        "numpy",
        "pointwise",
        "records",
        "reductions",
        "sequences",
        "scalar",
        "shape",
        "special",
        "stats",
        "",
    ],
    "read": ["", "origin", "scope", "source", "fence"],  # where the text is, reading it, checking it
    "rewrite": ["", "blocks", "local_state", "as_written", "tries", "assignments", "copies", "views"],  # gast -> gast
    # gast -> core IR: the rules below the protocol they call back through, the dispatcher last
    "lower": [
        "",
        "outside",
        "context",
        "closures",
        "control",
        "resolve",
        "as_written",
        "tries",
        "desugar",
        "unpacking",
        "objects",
        "updates",
        "derivatives",
        "calls",
        "lowerer",
    ],
    "infer": ["", "references", "ownership", "inference"],  # types
    "forward": ["", "transform"],  # forward mode: typed core IR -> core IR with tangents
    # Fig. 7 and its extensions, below the transformation that dispatches to them
    "chad": ["", "returned_vectors", "stages", "writes", "context", "calls", "loops", "terms", "transform"],
    "optimise": [
        "",
        "inlining",
        "dataflow",
        "batched_one_hots",
        "shape_stand_ins",
        "peephole",
        "uniform_cotangents",
        "forward_sums",
        "simplify",
        "caller_accumulators",  # after lifting: across the module's functions
    ],
    "backend": ["", "build", "codegen", "lift"],
    "pipeline": [""],  # every pass, in the order they run
    "api": ["", "conversions", "sharing", "plans", "transforms", "forward", "decorated"],
    "": [""],  # the package itself (`__init__`): the public names
    "__main__": [""],  # the command line
}
ORDER = [".".join(part for part in (stage, m) if part) for stage, modules in STAGES.items() for m in modules]
PACKAGE = pathlib.Path(chadpy.__file__).parent


def _module(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: pathlib.Path) -> set[str]:
    return _imports_of(path.read_text(), _module(path), path.name == "__init__.py")


def _imports_of(text: str, module: str, package: bool) -> set[str]:
    """The chadpy modules a module's text imports (relative imports: a module, or a name from one),
    wherever the import stands."""
    tree = ast.parse(text)
    here = module.split(".") if package else module.split(".")[:-1]
    here = [p for p in here if p]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
            module = ".".join([*base, *([node.module] if node.module else [])])
            submodules = {f"{module}.{a.name}".lstrip(".") for a in node.names} & set(ORDER)
            out |= submodules if len(submodules) == len(node.names) else {module, *submodules}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            # the command line uses the public package (`import chadpy`); its modules are imported relatively
            assert not any(n.startswith("chadpy.") for n in names), f"{module}: import chadpy's modules relatively"
    return out


@functools.cache
def _graph() -> dict[str, set[str]]:
    return {_module(p): _imports(p) for p in PACKAGE.rglob("*.py")}


def test_every_module_is_in_a_layer():
    modules = set(_graph())
    assert modules == set(ORDER), f"add to STAGES: {sorted(modules - set(ORDER))}; gone: {sorted(set(ORDER) - modules)}"


def test_imports_go_down_the_layers():
    wrong = [
        f"{name or 'chadpy'} imports {imported}"
        for name, imports in _graph().items()
        for imported in imports
        if imported in ORDER and ORDER.index(imported) >= ORDER.index(name)
    ]
    assert not wrong, wrong


def test_every_import_is_counted():
    """An import for type hints only, one inside a function and a name imported from a package's module
    all count."""
    text = """
from typing import TYPE_CHECKING
from . import context
if TYPE_CHECKING:
    from ..chad.transform import Chad
def f():
    from ..ir import nodes
"""
    assert _imports_of(text, "lower.control", False) == {"lower.context", "chad.transform", "ir.nodes"}


def test_the_runtime_imports_nothing_of_the_compiler():
    for name, imports in _graph().items():
        if name.startswith("runtime"):
            assert {i for i in imports if i} <= {m for m in ORDER if m.startswith("runtime")} | {"errors"}, name


def test_the_type_lattice_imports_neither_the_runtime_nor_the_target_language():
    assert _graph()["ir.types"] <= {"errors", "ir.records"}
