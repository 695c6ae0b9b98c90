"""Where things are: the repository's root (the README, docs/, benchmarks/, examples/)."""

import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
