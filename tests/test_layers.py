"""The modules form layers: each imports only modules listed before it here (docs/design.md).

Imports under `if TYPE_CHECKING:` are for type hints only and do not count.
"""

import ast
import pathlib

import chadpy

# Lowest first: the runtime and the target language below the compiler, the type lattice
# below the rules, the front end below inference, CHAD below code generation, the API last.
ORDER = [
    "errors",
    "names",
    "cost",
    "scope",
    # the runtime: cotangent monoids, arrays' cotangents, the environments of the four stages
    "runtime",
    "arrays",
    "buffers",  # element assignment: the log of writes, the owned cotangent buffer
    "array_rules",
    "reduction_rules",
    "shape_rules",
    "linalg_rules",
    "special_rules",  # SciPy's: imported only by rules.special and rules.stats
    "expressions",  # the generated code's expressions (rules are written in them)
    "target",  # its statements
    "ir",
    "records",  # which objects are records, and how a class is built
    "vtypes",  # the type lattice: neither the runtime nor the target language
    "cotangents",
    "environments",
    # the rule registry
    "kinds",
    "primitives",
    "rules.pointwise",
    "rules.sequences",
    "rules.records",
    "rules.numpy",
    "rules.reductions",
    "rules.shape",
    "rules.linalg",
    "rules.special",
    "rules.stats",
    "rules.scalar",
    "rules",
    # the front end: source -> core IR
    "source",
    "fence",
    "verify",
    "resolve",
    "closures",
    "control",
    "desugar",
    "assignments",
    "copies",
    "views",
    "objects",
    "updates",
    "lower",
    "ownership",
    "infer",
    # CHAD and code generation
    "stages",
    "rewinds",
    "fold",
    "calls",
    "chad",
    "fig2",
    "pullbacks",
    "tidy",
    "fuse",
    "collect",
    "release",
    "simplify",
    "codegen",
    "build",
    "api",
    "",  # the package itself
    "__main__",
]
PACKAGE = pathlib.Path(chadpy.__file__).parent


def _module(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: pathlib.Path) -> set[str]:
    """The chadpy modules `path` imports (relative imports), not counting `if TYPE_CHECKING:` blocks."""
    tree = ast.parse(path.read_text())
    hints = [n for n in ast.walk(tree) if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"]
    hinted = {id(m) for h in hints for m in ast.walk(h)}
    here = _module(path).split(".") if path.name == "__init__.py" else _module(path).split(".")[:-1]
    here = [p for p in here if p]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level and id(node) not in hinted:
            base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
            if node.module:
                out.add(".".join([*base, node.module]))
            else:
                out.update(".".join([*base, a.name]) for a in node.names)
    return out


def test_every_module_is_in_a_layer():
    modules = {_module(p) for p in PACKAGE.rglob("*.py")}
    assert modules == set(ORDER), f"add to ORDER: {sorted(modules - set(ORDER))}; gone: {sorted(set(ORDER) - modules)}"


def test_imports_go_down_the_layers():
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        name = _module(path)
        for imported in _imports(path):
            if imported in ORDER and ORDER.index(imported) >= ORDER.index(name):
                wrong.append(f"{name or 'chadpy'} imports {imported}")
    assert not wrong, wrong


def test_the_type_lattice_imports_neither_the_runtime_nor_the_target_language():
    assert _imports(PACKAGE / "vtypes.py") <= {"errors", "ir", "records"}
