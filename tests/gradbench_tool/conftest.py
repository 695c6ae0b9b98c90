"""The GradBench tool's modules are imported by their eval's name, as its `run.py` imports them."""

import pathlib
import sys

TOOL = pathlib.Path(__file__).parents[2] / "benchmarks" / "gradbench_tool"
sys.path.insert(0, str(TOOL))
