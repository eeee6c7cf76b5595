"""Shared data and oracles for the Python tests: dense float64 references from SciPy's cdist
(or NumPy for the metrics SciPy lacks) and a tie-aware comparison of k-NN results."""

import ctypes
import os
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist

# Every metric under the library's name, with the cdist name where SciPy has the metric.
CDIST_NAME = {
    "cosine": "cosine",
    "euclidean": "euclidean",
    "sqeuclidean": "sqeuclidean",
    "manhattan": "cityblock",
    "chebyshev": "chebyshev",
    "minkowski": "minkowski",
    "canberra": "canberra",
    "braycurtis": "braycurtis",
    "hamming": "hamming",
    "jaccard": "jaccard",
    "dice": "dice",
    "russellrao": "russellrao",
    "correlation": "correlation",
    "jensenshannon": "jensenshannon",
    "hellinger": None,
    "kl_divergence": None,
    "inner_product": None,
}
METRICS = sorted(CDIST_NAME)


def _auto_is_cuda():
    from spira._device import resolve_device

    return resolve_device("auto")


# Whether device="auto" runs the CUDA backend here. Its sums use floating-point atomics, whose order
# varies from run to run (docs/cuda-engine.md): the same call may differ in the last bit.
ON_CUDA = _auto_is_cuda()


def assert_same_run_to_run(actual, desired):
    """Two results of the same computation: the same bytes on the host backend; within the last
    bits on the CUDA backend."""
    if not ON_CUDA:
        np.testing.assert_array_equal(actual, desired)
    else:
        rtol = 1e-6 if np.asarray(desired).dtype == np.float32 else 1e-12
        np.testing.assert_allclose(actual, desired, rtol=rtol)
BOOLEAN = {"jaccard", "dice", "russellrao"}
MINKOWSKI_P = 3.0


def random_sparse(rows, cols, density, seed, boolean=False):
    """Non-negative random CSR (float64) without empty rows, so that every metric is defined."""
    rng = np.random.default_rng(seed)
    dense = rng.uniform(0.1, 1.0, size=(rows, cols)) * (rng.random((rows, cols)) < density)
    dense[np.arange(rows), rng.integers(0, cols, rows)] = rng.uniform(0.1, 1.0, rows)
    if boolean:
        dense = (dense != 0).astype(np.float64)
    return sp.csr_matrix(dense)


def oracle(metric, X, Y, p=MINKOWSKI_P):
    """Dense float64 distances (similarities for inner_product) between the rows of X and Y."""
    x = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    y = Y.toarray() if sp.issparse(Y) else np.asarray(Y, dtype=np.float64)
    name = CDIST_NAME[metric]
    if metric in BOOLEAN:
        return cdist(x != 0, y != 0, name)
    if metric == "minkowski":
        return cdist(x, y, "minkowski", p=p)
    if name is not None:
        return cdist(x, y, name)
    if metric == "hellinger":
        return np.sqrt(np.maximum(cdist(np.sqrt(x), np.sqrt(y), "sqeuclidean"), 0) / 2)
    if metric == "kl_divergence":
        out = np.zeros((x.shape[0], y.shape[0]))
        for i, a in enumerate(x):
            nz = a > 0
            out[i] = (a[nz] * np.log(a[nz] / np.maximum(y[:, nz], 1e-10))).sum(axis=1)
        return out
    if metric == "inner_product":
        return x @ y.T
    raise AssertionError(metric)


def assert_knn_matches(distances, indices, D, k, largest=False, rtol=1e-5, atol=1e-6,
                       exclude=None):
    """Tie-aware check of a k-NN result against the full distance matrix D (float64).

    Per row: the distances equal the k best of D (sorted) within tolerance; each listed index is
    valid, listed once and its D value equals the distance listed for it; any index strictly
    better than the k-th best (beyond the tolerance) is listed. exclude[i] is an index that must
    not appear in row i (exclude_self)."""
    n_q = D.shape[0]
    assert distances.shape == (n_q, k) and indices.shape == (n_q, k)
    assert distances.dtype == np.float32 and indices.dtype == np.int64
    for row in range(n_q):
        d = D[row].copy()
        if exclude is not None:
            d[exclude[row]] = -np.inf if largest else np.inf
        key = -d if largest else d
        best = np.sort(key)[:k]
        got = -distances[row].astype(np.float64) if largest else distances[row].astype(np.float64)
        np.testing.assert_allclose(got, best, rtol=rtol, atol=atol, err_msg=f"row {row}")
        ind = indices[row]
        assert len(set(ind.tolist())) == k, f"row {row}: an index listed twice: {ind}"
        assert ((ind >= 0) & (ind < D.shape[1])).all()
        if exclude is not None:
            assert exclude[row] not in ind
        np.testing.assert_allclose(key[ind], got, rtol=rtol, atol=atol, err_msg=f"row {row}")
        kth = best[-1]
        must = np.flatnonzero(key < kth - (atol + rtol * abs(kth)))
        assert set(must.tolist()) <= set(ind.tolist()), f"row {row}: a nearer index is missing"
        # Nearest first.
        assert (np.diff(got) >= -(atol + rtol * np.abs(got[1:]))).all()


@pytest.fixture(scope="session")
def data():
    """(X, Y, Xbool, Ybool): 60 x 15 index and 25 x 15 query matrices, weighted and 0/1."""
    return (
        random_sparse(60, 15, 0.3, 1),
        random_sparse(25, 15, 0.3, 2),
        random_sparse(60, 15, 0.3, 3, boolean=True),
        random_sparse(25, 15, 0.3, 4, boolean=True),
    )


def pick(data, metric):
    X, Y, Xb, Yb = data
    return (Xb, Yb) if metric in BOOLEAN else (X, Y)


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def _mallinfo2():
    try:
        f = ctypes.CDLL(None).mallinfo2  # glibc >= 2.33
    except (AttributeError, OSError):
        return None
    f.restype = _Mallinfo2
    return f


_MALLINFO2 = _mallinfo2()


def heap_bytes():
    """Bytes allocated through malloc and still in use (glibc's mallinfo2: the heap plus mmapped
    blocks), which counts the library's buffers and NumPy's arrays exactly; the resident set size
    elsewhere on Linux; None where neither is available."""
    if _MALLINFO2 is not None:
        m = _MALLINFO2()
        return m.uordblks + m.hblkhd
    if os.path.exists("/proc/self/statm"):
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return None


class DieOnce:
    """A Dask chunk whose `after`-th conversion to an array (inside a task, once the tasks of the
    earlier conversions have run) ends its worker process, once: a marker file created with
    O_EXCL lets exactly one conversion die, across the worker processes."""

    def __init__(self, block, marker, after):
        self.block, self.marker, self.after = block, marker, after
        self.shape, self.dtype, self.ndim = block.shape, block.dtype, block.ndim

    def __array__(self, dtype=None, copy=None):
        with open(self.marker + ".uses", "a") as f:
            f.write("x")
        if os.path.getsize(self.marker + ".uses") >= self.after:
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                pass
            else:
                os._exit(1)  # the worker dies mid-task, with the results it computed so far
        return np.asarray(self.block, dtype=dtype)


def arm_to_die(block, marker, victim, after, block_info=None):
    """For map_blocks: chunk `victim` (along the first axis) becomes a DieOnce."""
    if block_info[0]["chunk-location"][0] == victim:
        return DieOnce(block, marker, after)
    return block


def compute_while_a_worker_dies(client, marker, *lazy):
    """dask.compute(*lazy) on `client`, with a chunk armed by arm_to_die(..., marker, ...): checks
    that a worker did die and that its nanny started another; returns the results, the task
    stream's records and the time the worker died."""
    import cloudpickle
    import dask
    import distributed

    before = set(client.scheduler_info()["workers"])
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import us
    try:
        with distributed.get_task_stream(client) as stream:
            got = dask.compute(*lazy)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert os.path.exists(marker)  # a worker did die
    client.wait_for_workers(len(before), timeout=60)
    assert set(client.scheduler_info()["workers"]) != before  # the nanny started a new one
    return got, stream.data, os.path.getmtime(marker)
