"""Imported first by the benchmark scripts: NumPy's BLAS, XLA and torch each on one thread, JAX on the CPU (set
before any of them is imported)."""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
os.environ["JAX_PLATFORMS"] = "cpu"
