"""chadpy's GradBench tool: `python benchmarks/gradbench_tool/run.py` speaks GradBench's protocol on stdin and stdout.

Single-threaded unless `--multithreaded` is given, as GradBench's other tools: NumPy's BLAS is
limited to one thread before NumPy is imported.
"""

# ruff: noqa: E402  (the thread limits must be set before NumPy is imported)
from __future__ import annotations

import argparse
import os
import sys

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--multithreaded", action="store_true", help="let NumPy's BLAS use every core")
if not parser.parse_args().multithreaded:
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the eval modules, by their eval's name

import protocol

protocol.serve(sys.stdin, sys.stdout)
