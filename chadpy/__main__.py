"""The chadpy command line.

    python -m chadpy show FILE.py:FUNC [ARGS...] [--stage S] [--diff S2 [--side-by-side]] [--plain] [--no-simplify]
                                               [--after PASS]
        Print the derivative chadpy generates for FUNC (`chadpy.source`), or how two stages' derivatives differ;
        `--stage ir` prints the typed core IR that CHAD transforms, `--after PASS` the program after that pass.
    python -m chadpy passes
        List the passes, in the order they run, each with what it does.
    python -m chadpy cost FILE.py:FUNC ARGS... [--stage S|all] [--no-simplify]
        Print the cost of FUNC(*ARGS) and of its derivative (`chadpy.cost_report`), at one stage or at all four.

    python -m chadpy bench [--only NAME,...] [--full]
        Run the benchmarks against hand-written gradients and the installed peers (benchmarks/run.py of a
        source checkout): the quick subset (about a minute) unless --full.

ARGS are Python expressions: literals such as `1.5`, `(1.0, 2.0)`, `[1.0, 2.0]`, `{"a": 1.0}`, or expressions
over `np`/`numpy` and `math` such as `np.ones(3)`. Errors in the command line or in differentiating exit with status 2.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import importlib.util
import itertools
import math
import sys
import types
import uuid
from pathlib import Path
from typing import Any

import numpy

import chadpy

from .pipeline import PASSES

STAGES = list(chadpy.STAGES)
MAX_WIDTH = 100  # of the left column of --side-by-side


class CliError(Exception):
    """A user error reported as one line on stderr (exit status 2)."""


def parse_arg(text: str) -> Any:
    """An example argument: a Python literal, else an expression over `np`, `numpy` and `math`."""
    try:
        return ast.literal_eval(text)
    except Exception:
        pass  # not a literal
    try:
        return eval(text, {"np": numpy, "numpy": numpy, "math": math})
    except Exception as e:
        raise argparse.ArgumentTypeError(f"cannot evaluate {text!r}: {type(e).__name__}: {e}") from None


def load_function(spec: str) -> types.FunctionType:
    """The function FUNC of FILE.py:FUNC (a `@chadpy.reverse` object is unwrapped)."""
    filename, sep, name = spec.rpartition(":")
    if not sep or not filename or not name:
        raise CliError(f"expected FILE.py:FUNC, got {spec!r}")
    path = Path(filename).resolve()
    if not path.is_file():
        raise CliError(f"no such file: {filename}")
    module_spec = importlib.util.spec_from_file_location(f"_chadpy_cli_{uuid.uuid4().hex}", path)
    if module_spec is None or module_spec.loader is None:
        raise CliError(f"cannot import {filename}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_spec.name] = module
    sys.path.insert(0, str(path.parent))  # so that the file's sibling imports work
    try:
        module_spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    if not hasattr(module, name):
        raise CliError(f"{filename} has no function {name!r}")
    obj = getattr(module, name)
    if isinstance(obj, chadpy.Reverse):
        obj = obj.__chad_wrapped__
    if not isinstance(obj, types.FunctionType):
        raise CliError(f"{name!r} in {filename} is not a Python function but {type(obj).__name__}")
    return obj


def clip(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def side_by_side(left: str, right: str, left_name: str, right_name: str) -> str:
    lefts, rights = left.splitlines(), right.splitlines()
    width = min(MAX_WIDTH, max(map(len, lefts + [left_name])))
    rows = [(left_name, right_name), ("-" * width, "-" * len(right_name))]
    rows += itertools.zip_longest(lefts, rights, fillvalue="")
    return "\n".join(f"{clip(a, width):<{width}} | {clip(b, MAX_WIDTH)}".rstrip() for a, b in rows)


def show(args: argparse.Namespace) -> str:
    fn = load_function(args.function)

    def text(stage: str) -> str:
        return chadpy.source(
            fn, *args.args, stage=stage, annotate=not args.plain, simplify=not args.no_simplify, after=args.after
        )

    if args.diff is None:
        return text(args.stage)
    old, new = text(args.stage), text(args.diff)
    if args.side_by_side:
        return side_by_side(old, new, args.stage, args.diff)
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), args.stage, args.diff, lineterm="")
    return "\n".join(diff)


def passes(args: argparse.Namespace) -> str:
    width = max(len(p.name) for p in PASSES)
    return "\n".join(f"{p.name:<{width}}  {p.makes:<8}  {p.doc}" for p in PASSES)


def cost(args: argparse.Namespace) -> str:
    fn = load_function(args.function)
    stages = STAGES if args.stage == "all" else [args.stage]
    reports = [(s, chadpy.cost_report(fn, *args.args, stage=s, simplify=not args.no_simplify)) for s in stages]
    where = "every stage" if args.stage == "all" else f"stage {args.stage}"
    lines = [f"{fn.__name__} at {where} (bytecode instructions + array elements, chadpy.cost)"]
    row = "{:<10} {:>12} {:>12} {:>12}".format
    if args.stage == "all":
        lines.append(row("", "primal", "derivative", "ratio"))
        lines += [row(s, r.primal.total, r.derivative.total, f"{r.ratio:.2f}") for s, r in reports]
    else:
        [(_, r)] = reports
        lines.append(row("", "instructions", "elements", "total"))
        for name, c in (("primal", r.primal), ("derivative", r.derivative)):
            lines.append(row(name, c.opcodes, c.elements, c.total))
        lines.append(row("ratio", "", "", f"{r.ratio:.2f}"))
    return "\n".join(lines)


def bench(args: argparse.Namespace) -> str:
    script = Path(chadpy.__file__).resolve().parent.parent / "benchmarks" / "run.py"
    if not script.is_file():
        raise CliError("the benchmarks are in a source checkout of chadpy (benchmarks/run.py); this install has none")
    spec = importlib.util.spec_from_file_location("chadpy_benchmarks_run", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    argv = ([] if args.full else ["--quick"]) + (["--only", args.only] if args.only else [])
    module.main(argv)
    return ""


def make_parser() -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(prog="python -m chadpy", description=__doc__, formatter_class=formatter)
    commands = parser.add_subparsers(dest="command", metavar="{show,passes,cost,bench}")
    target = dict(metavar="FILE.py:FUNC", help="the function FUNC defined in the Python file FILE.py")
    example = "Python expressions (literals, or using np/numpy and math, e.g. 1.5 '[1.0, 2.0]' 'np.ones(3)')"
    no_simplify = dict(action="store_true", help="do not simplify (only the efficient stage is ever simplified)")

    show_parser = commands.add_parser("show", help="print the generated derivative's source")
    show_parser.set_defaults(run=show, parser=show_parser)
    show_parser.add_argument("function", **target)
    show_parser.add_argument("args", nargs="*", type=parse_arg, metavar="ARGS", help=f"example arguments: {example}")
    show_parser.add_argument(
        "--stage", choices=[*STAGES, "ir"], default="efficient", help="ir: the typed core IR; default: %(default)s"
    )
    show_parser.add_argument("--diff", choices=STAGES, metavar="S2", help="print a unified diff from --stage to S2")
    show_parser.add_argument("--side-by-side", action="store_true", help="with --diff: two columns instead")
    show_parser.add_argument("--plain", action="store_true", help="without the comments naming CHAD's rules")
    show_parser.add_argument("--no-simplify", **no_simplify)
    show_parser.add_argument(
        "--after", metavar="PASS", choices=[p.name for p in PASSES], help="the program after this pass (see `passes`)"
    )

    passes_parser = commands.add_parser("passes", help="list the passes in the order they run")
    passes_parser.set_defaults(run=passes, parser=passes_parser)

    cost_parser = commands.add_parser("cost", help="compare the cost of the function and of its derivative")
    cost_parser.set_defaults(run=cost, parser=cost_parser)
    cost_parser.add_argument("function", **target)
    cost_parser.add_argument("args", nargs="+", type=parse_arg, metavar="ARGS", help=f"the arguments: {example}")
    cost_parser.add_argument("--stage", choices=STAGES + ["all"], default="efficient", help="default: %(default)s")
    cost_parser.add_argument("--no-simplify", **no_simplify)

    bench_parser = commands.add_parser("bench", help="time gradients against hand-written ones and the peers")
    bench_parser.set_defaults(run=bench, parser=bench_parser)
    bench_parser.add_argument("--only", help="comma-separated workload names (a prefix is enough)")
    bench_parser.add_argument("--full", action="store_true", help="the large sizes, all peers (minutes)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if args.command == "show" and args.side_by_side and args.diff is None:
        args.parser.error("--side-by-side needs --diff")
    try:
        out = args.run(args)
    except CliError as e:
        print(f"chadpy: error: {e}", file=sys.stderr)
        return 2
    except chadpy.ChadError as e:  # its place if it is in the user's file (the command line itself has none)
        user_file = Path(getattr(args, "function", "").rpartition(":")[0]).resolve()
        in_file = e.loc is not None and Path(e.loc.filename).resolve() == user_file
        print(f"chadpy: error: {e if in_file else e.message}", file=sys.stderr)
        return 2
    sys.stdout.write(out if not out or out.endswith("\n") else out + "\n")  # `show` prints the source exactly
    return 0


if __name__ == "__main__":
    sys.exit(main())
