"""spira.dask.select_k on a LocalCluster of two worker processes: the top-k of a vector (and of
the rows of a matrix) held in Dask chunks equals spira.select_k on the whole array byte for byte
(values as bytes, indices exactly) for vectors full of ties, NaN, +-inf and signed zeros, k from 1
to the length, several chunkings (chunks of one element, uneven ones), both directions, sorted and
unsorted, with and without the threshold pass; what the threshold pass prunes; row blocks and
column blocks of a matrix; errors; and a worker process killed during the run."""


import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="spira.dask needs dask[array]")
distributed = pytest.importorskip("distributed", reason="the tests need dask.distributed")
import dask  # noqa: E402

from conftest import arm_to_die, compute_while_a_worker_dies  # noqa: E402

import spira  # noqa: E402
import spira.dask  # noqa: E402
from spira.dask._select import delegate_group  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


def tied_vector(n, seed, dtype=np.float64):
    """Small integers (many ties), with NaN, +inf, -inf, -0.0 and +0.0 sprinkled in."""
    rng = np.random.default_rng(seed)
    v = rng.integers(-4, 5, n).astype(dtype)
    u = rng.random(n)
    v[u < 0.06] = np.nan
    v[(u >= 0.06) & (u < 0.09)] = np.inf
    v[(u >= 0.09) & (u < 0.12)] = -np.inf
    v[(u >= 0.12) & (u < 0.2)] = -0.0
    return v


def assert_identical(got, want, label=""):
    (v, i), (v0, i0) = got, want
    assert v.dtype == v0.dtype and i.dtype == np.int64, label
    assert v.shape == v0.shape and i.shape == i0.shape, label
    np.testing.assert_array_equal(i, i0, err_msg=str(label))
    assert v.tobytes() == v0.tobytes(), label


def run_cases(x, cases):
    """spira.dask.select_k for every (chunks, k, options) case in one compute, each compared
    with spira.select_k on the whole array."""
    lazy, want = [], []
    for chunks, k, opts in cases:
        lazy.append(spira.dask.select_k(da.from_array(x, chunks=chunks), k, **opts))
        want.append(spira.select_k(x, k, **{o: opts[o] for o in ("largest", "sorted")
                                            if o in opts}))
    got = dask.compute(*lazy)
    for g, w, case in zip(got, want, cases):
        assert_identical(g, w, case)


def test_every_k_every_direction(client):
    # k = 1 ... n on a short vector of ties, NaN and infinities, cut unevenly (chunks of one
    # element and an empty one), merged two at a time.
    v = tied_vector(41, 0)
    chunks = ((1, 12, 0, 7, 1, 20),)
    cases = [(chunks, k, {"largest": lg, "sorted": st, "split_every": 2})
             for k in range(1, 42) for lg in (True, False) for st in (True, False)]
    run_cases(v, cases)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_chunkings_and_pruning(client, dtype):
    n = 5000
    v = tied_vector(n, 1, dtype)
    chunkings = [n, 1250, 333, ((1, 2000, 7, 2992),)]
    cases = [(c, k, {"largest": lg, "sorted": st, "prune": pr})
             for c in chunkings for k in (1, 2, 31, 32, 33, 100, 1000, n - 1, n)
             for lg, st in ((True, True), (False, False)) for pr in (True, False)]
    run_cases(v, cases)


def test_nan_and_infinities(client):
    # More NaN than numbers: with k above the numbers, NaNs follow them (smaller index first).
    v = np.full(300, np.nan)
    v[::7] = np.inf
    v[3::11] = -np.inf
    v[5::13] = -0.0
    v[6::13] = 0.0
    numbers = int((~np.isnan(v)).sum())
    cases = [(c, k, {"largest": lg}) for c in (300, 17, ((1, 299),))
             for k in (1, numbers - 1, numbers, numbers + 1, 300) for lg in (True, False)]
    run_cases(v, cases)
    equal = np.full(1000, 2.5)  # every value tied: the k smallest indices
    run_cases(equal, [(c, k, {}) for c in (1000, 64) for k in (1, 500, 1000)])


def test_integer_and_bool_input(client):
    rng = np.random.default_rng(3)
    ints = rng.integers(0, 3, 999)
    run_cases(ints, [(100, 50, {}), (100, 50, {"largest": False})])
    run_cases(ints.astype(bool), [(250, 400, {})])


def candidates(values):
    """The candidates each chunk's task handed on and the elements it selected among."""
    keys = [key for key in values.dask.keys() if "-candidates" in str(key)]
    parts = dask.get(dict(values.dask), keys)
    return sum(int((p[1] >= 0).sum()) for p in parts), sum(p[2] for p in parts)


def test_threshold_pass_prunes(client):
    # Uniform random vector in 16 chunks: without the threshold every chunk sends k candidates
    # and selects among all its elements; with it, a few more than k travel in all.
    rng = np.random.default_rng(4)
    n, chunks = 1 << 18, 1 << 14
    v = rng.random(n)
    x = da.from_array(v, chunks=chunks)
    for k in (1, 64, 1024):
        assert delegate_group(n, k) is not None
        sent, read = candidates(spira.dask.select_k(x, k, prune=False)[0])
        assert (sent, read) == (16 * k, n)
        sent, read = candidates(spira.dask.select_k(x, k)[0])
        assert k <= sent == read < 4 * k
    # Sorted input: contiguous sub-ranges would put all the best in one chunk; the strided
    # groups still give a tight bound.
    sent, read = candidates(spira.dask.select_k(da.from_array(np.sort(v), chunks=chunks), 64)[0])
    assert 64 <= sent < 4 * 64
    # Too few groups for k (k close to n / 128): no threshold pass, still exact.
    assert delegate_group(n, n // 64) is None
    run_cases(v, [(chunks, n // 64, {}), (chunks, 1024, {})])


def test_matrix_rows_and_column_blocks(client):
    rng = np.random.default_rng(5)
    A = rng.integers(0, 4, (60, 300)).astype(np.float32)
    A[rng.random(A.shape) < 0.1] = np.nan
    A[7] = np.nan  # a row of NaN
    A[8, 10:] = np.nan  # a row with fewer numbers than k
    A[9] = -0.0
    cases = [(c, k, {"largest": lg, "sorted": st}) for c in
             [(60, 300), (13, 300), ((0, 1, 59), 300), (20, 64), ((5, 0, 55), (1, 150, 149))]
             for k in (1, 33, 299, 300) for lg, st in ((True, True), (False, False))]
    run_cases(A, cases)
    x = da.from_array(A, chunks=(13, 300))
    values, indices = spira.dask.select_k(x, 5)
    assert values.chunks == indices.chunks == ((13, 13, 13, 13, 8), (5,))
    # Row blocks alone: one task per block, nothing merged.
    assert not [k for k in values.dask.keys() if "-candidates" in str(k)]


def test_results_lazy_or_persisted(client):
    v = tied_vector(2000, 6)
    x = da.from_array(v, chunks=300)
    values, indices = spira.dask.select_k(x, 25)
    assert isinstance(values, da.Array) and values.shape == (25,) and values.dtype == v.dtype
    assert isinstance(indices, da.Array) and indices.dtype == np.int64
    vp, ip = spira.dask.select_k(x, 25, client=client)  # results stay on the workers
    assert_identical((vp.compute(), ip.compute()), spira.select_k(v, 25))


def test_docstring_examples(client):
    import doctest

    import spira.dask._select

    assert doctest.testmod(spira.dask._select).failed == 0


def test_argument_errors():
    v = np.arange(10.0)
    x = da.from_array(v, chunks=4)
    with pytest.raises(TypeError, match="dask.array.Array"):
        spira.dask.select_k(v, 3)
    with pytest.raises(ValueError, match=r"k = 11 must be in \[1, 10\]"):
        spira.dask.select_k(x, 11)
    with pytest.raises(ValueError, match=r"k = 0 must be in \[1, 10\]"):
        spira.dask.select_k(x, 0)
    with pytest.raises(TypeError, match="k must be an integer"):
        spira.dask.select_k(x, 2.0)
    with pytest.raises(TypeError, match="k must be an integer"):
        spira.dask.select_k(x, True)
    with pytest.raises(ValueError, match="1-D or 2-D"):
        spira.dask.select_k(da.ones((2, 2, 2), chunks=1), 1)
    with pytest.raises(TypeError, match="real numbers"):
        spira.dask.select_k(da.from_array(np.array(["a", "b"]), chunks=1), 1)
    with pytest.raises(TypeError, match="real numbers"):
        spira.dask.select_k(da.from_array(np.ones(4, complex), chunks=2), 1)
    with pytest.raises(ValueError, match="device"):
        spira.dask.select_k(x, 2, device="gpu")
    with pytest.raises(ValueError, match="split_every"):
        spira.dask.select_k(x, 2, split_every=1)
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        spira.dask.select_k(x[x > 3], 2)


def test_worker_killed_during_the_run(client, tmp_path):
    marker = str(tmp_path / "died")
    v = tied_vector(60_000, 7)
    x = da.from_array(v, chunks=5000)
    x = x.map_blocks(arm_to_die, marker, 11, 2, dtype=v.dtype, meta=np.empty((0,)))
    assert delegate_group(60_000, 100) is not None  # the chunk is read twice
    got, stream, died = compute_while_a_worker_dies(client, marker, *spira.dask.select_k(x, 100))
    tasks = [t for t in stream if "-candidates" in str(t["key"])]
    passes = [t for t in stream if "-delegates" in str(t["key"])]
    assert any(t["startstops"][-1]["stop"] < died for t in passes)  # died after tasks ran
    assert len(tasks) < 2 * 12  # only what the dead worker ran or held is computed again
    assert_identical(got, spira.select_k(v, 100))
