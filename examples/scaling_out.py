"""A data-parallel gradient on a Dask cluster: the dataset in shards, one gradient per shard on the workers, summed.

The loss is defined here, in `__main__`: Dask sends the gradient function to its worker processes by value
(cloudpickle), with the text of this file, so the workers need not read it. On a real cluster, replace
`LocalCluster(...)` with the scheduler's address: `Client("tcp://scheduler:8786")`.

    python -m pip install "dask[distributed]"
    python examples/scaling_out.py
"""

import numpy as np
from dask.distributed import Client, LocalCluster

import chadpy as chad


def logistic_loss(w, X, y):
    """The summed logistic loss of a linear model on one shard of the data."""
    margins = y * (X @ w)
    return float(np.sum(np.logaddexp(0.0, -margins)))


def main() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4_000, 10))
    y = np.sign(X @ rng.standard_normal(10) + 0.1 * rng.standard_normal(4_000))
    w = 0.1 * rng.standard_normal(10)
    shards = [(X[k : k + 1_000], y[k : k + 1_000]) for k in range(0, 4_000, 1_000)]

    gradient = chad.grad(logistic_loss)  # with respect to w
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            parts = client.map(lambda shard: gradient(w, *shard), shards)
            on_the_cluster = sum(client.gather(parts))

    in_this_process = gradient(w, X, y)
    print("gradient on the cluster     :", np.round(on_the_cluster, 6))
    print("gradient in this process    :", np.round(in_this_process, 6))
    print("largest difference          :", float(np.max(np.abs(on_the_cluster - in_this_process))))
    assert np.allclose(on_the_cluster, in_this_process, rtol=1e-12, atol=1e-12)


if __name__ == "__main__":
    main()
