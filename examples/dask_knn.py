"""docs/distributed.md's first example: the exact k-NN graph of a sparse matrix in row blocks on a
local Dask cluster, equal byte for byte to the single-process result. python/tests/test_dask.py
runs it.

usage: python examples/dask_knn.py
"""

import dask
import dask.array as da
import scipy.sparse as sp
from distributed import Client, LocalCluster

import spira
import spira.dask

if __name__ == "__main__":  # worker processes import this file again: start the cluster once
    with LocalCluster(n_workers=2, threads_per_worker=1) as cluster, Client(cluster) as client:
        X = sp.random(4000, 2000, density=0.01, format="csr", random_state=0)
        Xd = da.from_array(X, chunks=(1000, -1), asarray=False)  # 4 row blocks of CSR

        distances, indices = spira.dask.kneighbors(Xd, n_neighbors=15, metric="cosine")
        distances, indices = dask.compute(distances, indices)  # one run for both arrays

        d0, i0 = spira.kneighbors(X, n_neighbors=15, metric="cosine")
        assert (indices == i0).all() and distances.tobytes() == d0.tobytes()

        G = spira.dask.kneighbors_graph(Xd, 15, mode="distance", metric="cosine", compute=True)
        print(f"identical to spira.kneighbors; graph {G.shape[0]} x {G.shape[1]}, {G.nnz} edges")
