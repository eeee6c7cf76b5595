"""The CUDA backend through Python: host input with device="cuda", and input already in GPU
memory (CuPy arrays, cupyx.scipy.sparse matrices, torch tensors) computed where it is with the
results left on the GPU. Skipped without the CUDA backend and a GPU (CI's build is host-only);
the GPU machine runs them."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import METRICS, MINKOWSKI_P, assert_knn_matches, oracle, pick, random_sparse

import spira
from spira import _core

pytestmark = pytest.mark.skipif(
    not (_core.cuda_compiled() and _core.cuda_device_count() > 0),
    reason="needs spira's CUDA backend and a CUDA GPU",
)


def _cupy():
    return pytest.importorskip("cupy")


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch


def _host(a):
    """A device result (CuPy array or torch tensor) as a NumPy array."""
    if hasattr(a, "get"):
        return a.get()
    return a.cpu().numpy()


def _p(metric):
    return MINKOWSKI_P if metric == "minkowski" else 2


# --- host input on the CUDA backend, against the float64 oracle -----------------------------


@pytest.mark.parametrize("metric", METRICS)
def test_kneighbors_cuda_matches_oracle(data, metric):
    X, Y = pick(data, metric)
    largest = metric == "inner_product"
    d, i = spira.kneighbors(X, Y, n_neighbors=5, metric=metric, p=_p(metric), device="cuda")
    assert isinstance(d, np.ndarray) and isinstance(i, np.ndarray)
    assert_knn_matches(d, i, oracle(metric, Y, X), 5, largest=largest, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("metric", METRICS)
def test_pairwise_cuda_matches_oracle(data, metric):
    X, Y = pick(data, metric)
    D = spira.pairwise_distances(X, Y, metric=metric, p=_p(metric), device="cuda")
    np.testing.assert_allclose(D, oracle(metric, X, Y), rtol=1e-6, atol=1e-9)


def test_select_k_cuda_equals_host():
    rng = np.random.default_rng(5)
    A = rng.integers(0, 20, size=(40, 300)).astype(np.float32)  # many ties
    A[3, 7] = np.nan
    for largest in (True, False):
        v_h, i_h = spira.select_k(A, 17, largest=largest, device="cpu")
        v_c, i_c = spira.select_k(A, 17, largest=largest, device="cuda")
        np.testing.assert_array_equal(i_c, i_h)
        np.testing.assert_array_equal(v_c, v_h)
    S = sp.random(50, 400, density=0.05, format="csr", random_state=1, dtype=np.float64)
    v_h, i_h = spira.select_k(S, 9, device="cpu")
    v_c, i_c = spira.select_k(S, 9, device="cuda")
    np.testing.assert_array_equal(i_c, i_h)
    np.testing.assert_array_equal(v_c, v_h)


def test_progress_on_cuda_reports_in_order_up_to_the_total():
    X = np.random.default_rng(3).random((2600, 6))
    for call in (
        lambda report: spira.kneighbors(X, X[:1200], n_neighbors=3, device="cuda",
                                        progress=report),
        lambda report: spira.pairwise_distances(X[:1200], X, device="cuda", progress=report),
    ):
        reports = []
        call(lambda *a: reports.append(a))
        done = [r[0] for r in reports]
        assert all(total == 1200 for _, total in reports)
        assert done == sorted(done) and done[-1] == 1200
    # Blocks of rows, so that Ctrl-C is seen during the call: about 20, of at least 8,192 rows on
    # CUDA (knn_policy::cuda_progress_min_rows).
    Q = np.random.default_rng(4).random((4 * 8192 + 10, 6))
    reports = []
    spira.pairwise_distances(Q, X[:50], device="cuda", progress=lambda *a: reports.append(a))
    assert len(reports) == 5 and reports[-1] == (Q.shape[0], Q.shape[0])


# --- input in GPU memory ------------------------------------------------------------------


def _cupy_forms(X):
    """The same matrix as CuPy / cupyx inputs of every accepted kind."""
    cupy = _cupy()
    import cupyx.scipy.sparse as cusp

    csr = cusp.csr_matrix(X)
    # The column order reversed inside every row: the same matrix, not canonical.
    indices, data = X.indices.copy(), X.data.copy()
    for r in range(X.shape[0]):
        a, b = X.indptr[r], X.indptr[r + 1]
        indices[a:b], data[a:b] = indices[a:b][::-1], data[a:b][::-1]
    unsorted = cusp.csr_matrix(
        (cupy.asarray(data), cupy.asarray(indices), cupy.asarray(X.indptr)), shape=X.shape
    )
    return {
        "csr": csr,
        "csc": cusp.csc_matrix(X),
        "coo": cusp.coo_matrix(X),
        "dense": cupy.asarray(X.toarray()),
        "unsorted": unsorted,
    }


@pytest.mark.parametrize("form", ["csr", "csc", "coo", "dense", "unsorted"])
@pytest.mark.parametrize("metric", ["cosine", "manhattan", "inner_product", "jensenshannon"])
def test_kneighbors_cupy_stays_on_device_and_equals_host_input(form, metric):
    cupy = _cupy()
    X = random_sparse(300, 40, 0.2, 11).astype(np.float32)
    d_ref, i_ref = spira.kneighbors(X, n_neighbors=7, metric=metric, device="cuda")
    Xd = _cupy_forms(X)[form]
    before = Xd.copy()
    d, i = spira.kneighbors(Xd, n_neighbors=7, metric=metric)
    assert isinstance(d, cupy.ndarray) and isinstance(i, cupy.ndarray)
    assert d.dtype == cupy.float32 and i.dtype == cupy.int64 and d.shape == (300, 7)
    np.testing.assert_array_equal(_host(i), i_ref)
    np.testing.assert_array_equal(_host(d), d_ref)
    # The input is never modified.
    after = Xd.toarray() if hasattr(Xd, "toarray") else Xd
    ref = before.toarray() if hasattr(before, "toarray") else before
    assert bool((after == ref).all())


def test_kneighbors_cupy_queries_exclude_self_and_graph():
    cupy = _cupy()
    import cupyx.scipy.sparse as cusp

    X = random_sparse(200, 30, 0.2, 12)  # float64 values, int32 indices
    Y = random_sparse(50, 30, 0.2, 13)
    Xd, Yd = cusp.csr_matrix(X), cusp.csr_matrix(Y)
    d_ref, i_ref = spira.kneighbors(X, Y, n_neighbors=4, metric="euclidean", device="cuda")
    d, i = spira.kneighbors(Xd, Yd, n_neighbors=4, metric="euclidean")
    np.testing.assert_array_equal(_host(i), i_ref)
    np.testing.assert_array_equal(_host(d), d_ref)
    d_ref, i_ref = spira.kneighbors(X, n_neighbors=4, exclude_self=True, device="cuda")
    d, i = spira.kneighbors(Xd, n_neighbors=4, exclude_self=True)
    np.testing.assert_array_equal(_host(i), i_ref)
    np.testing.assert_array_equal(_host(d), d_ref)
    for mode in ("connectivity", "distance"):
        G_ref = spira.kneighbors_graph(X, 4, mode=mode, device="cuda")
        G = spira.kneighbors_graph(Xd, 4, mode=mode)
        assert isinstance(G, cusp.csr_matrix) and G.dtype == cupy.float64
        np.testing.assert_array_equal(G.indptr.get(), G_ref.indptr)
        np.testing.assert_array_equal(G.indices.get(), G_ref.indices)
        np.testing.assert_array_equal(G.data.get(), G_ref.data)


def test_pairwise_and_select_k_cupy():
    cupy = _cupy()
    import cupyx.scipy.sparse as cusp

    X = random_sparse(120, 25, 0.3, 14).astype(np.float32)
    Y = random_sparse(70, 25, 0.3, 15).astype(np.float32)
    D_ref = spira.pairwise_distances(X, Y, metric="canberra", device="cuda")
    D = spira.pairwise_distances(cusp.csr_matrix(X), cusp.csr_matrix(Y), metric="canberra")
    assert isinstance(D, cupy.ndarray) and D.dtype == cupy.float32
    np.testing.assert_array_equal(D.get(), D_ref)
    D = spira.pairwise_distances(cusp.csr_matrix(X), cusp.csr_matrix(Y), metric="canberra",
                                 progress=lambda done, total: None)
    np.testing.assert_array_equal(D.get(), D_ref)
    A = np.random.default_rng(3).integers(0, 9, size=(33, 500)).astype(np.float64)
    v_ref, i_ref = spira.select_k(A, 31, largest=False, device="cuda")
    v, i = spira.select_k(cupy.asarray(A), 31, largest=False)
    assert isinstance(v, cupy.ndarray) and i.dtype == cupy.int64
    np.testing.assert_array_equal(i.get(), i_ref)
    np.testing.assert_array_equal(v.get(), v_ref)
    v, i = spira.select_k(cupy.asarray(A[0]), 5)  # one row
    v_ref, i_ref = spira.select_k(A[0], 5, device="cuda")
    np.testing.assert_array_equal(i.get(), i_ref)
    S = sp.random(40, 300, density=0.04, format="csr", random_state=4, dtype=np.float32)
    v_ref, i_ref = spira.select_k(S, 6, device="cuda")
    v, i = spira.select_k(cusp.csr_matrix(S), 6)
    assert i.dtype == cupy.int64
    np.testing.assert_array_equal(i.get(), i_ref)
    np.testing.assert_array_equal(v.get(), v_ref)


def test_input_written_on_another_stream_is_complete():
    cupy = _cupy()
    X = random_sparse(400, 50, 0.2, 16).astype(np.float32)
    d_ref, i_ref = spira.kneighbors(X, n_neighbors=5, device="cuda")
    with cupy.cuda.Stream(non_blocking=True):
        dense = cupy.asarray(X.toarray()) * 1  # written on the non-blocking stream
        d, i = spira.kneighbors(dense, n_neighbors=5)
    np.testing.assert_array_equal(i.get(), i_ref)
    np.testing.assert_array_equal(d.get(), d_ref)


def test_kneighbors_torch_dense_and_sparse():
    torch = _torch()
    X = random_sparse(250, 35, 0.2, 17).astype(np.float32)
    d_ref, i_ref = spira.kneighbors(X, n_neighbors=6, metric="cosine", device="cuda")
    dense = torch.as_tensor(X.toarray(), device="cuda")
    for t in (dense, dense.to_sparse_csr(), dense.to_sparse_coo()):
        d, i = spira.kneighbors(t, n_neighbors=6, metric="cosine")
        assert isinstance(d, torch.Tensor) and d.is_cuda and i.dtype == torch.int64
        np.testing.assert_array_equal(_host(i), i_ref)
        np.testing.assert_array_equal(_host(d), d_ref)
    G = spira.kneighbors_graph(dense, 6, mode="distance", metric="cosine")
    G_ref = spira.kneighbors_graph(X, 6, mode="distance", metric="cosine", device="cuda")
    assert G.layout == torch.sparse_csr and G.is_cuda
    np.testing.assert_array_equal(G.crow_indices().cpu().numpy(), G_ref.indptr)
    np.testing.assert_array_equal(G.col_indices().cpu().numpy(), G_ref.indices)
    np.testing.assert_array_equal(G.values().cpu().numpy(), G_ref.data)
    v, i = spira.select_k(dense, 4)
    v_ref, i_ref = spira.select_k(X.toarray(), 4, device="cuda")
    np.testing.assert_array_equal(_host(i), i_ref)
    np.testing.assert_array_equal(_host(v), v_ref)
    D = spira.pairwise_distances(dense, metric="manhattan")
    assert isinstance(D, torch.Tensor) and D.is_cuda
    np.testing.assert_array_equal(_host(D), spira.pairwise_distances(X, metric="manhattan",
                                                                     device="cuda"))


def test_device_input_errors():
    cupy = _cupy()
    import cupyx.scipy.sparse as cusp

    X = random_sparse(30, 10, 0.3, 18)
    Xd = cusp.csr_matrix(X)
    with pytest.raises(ValueError, match="device='cpu' but X is in CUDA memory"):
        spira.kneighbors(Xd, n_neighbors=2, device="cpu")
    with pytest.raises(ValueError, match="all be in host memory"):
        spira.kneighbors(Xd, X, n_neighbors=2)
    bad = Xd.copy()
    bad.data[0] = cupy.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        spira.kneighbors(bad, n_neighbors=2)
    neg = Xd.copy()
    neg.data[0] = -1.0
    with pytest.raises(ValueError, match="negative"):
        spira.kneighbors(neg, n_neighbors=2, metric="jensenshannon")
    with pytest.raises(ValueError, match="n_neighbors"):
        spira.kneighbors(Xd, n_neighbors=31)
    with pytest.raises(ValueError, match="features"):
        spira.kneighbors(Xd, cusp.csr_matrix(random_sparse(5, 11, 0.3, 19)), n_neighbors=2)
    with pytest.raises(ValueError, match="2-D"):
        spira.kneighbors(cupy.ones(5), n_neighbors=2)


def test_dask_select_k_of_cupy_chunks_matches_one_select_k():
    """spira.dask.select_k of chunks in GPU memory (delegates, pruning and selection on the GPU,
    candidates merged in host memory) equals spira.select_k of the whole vector on the host, byte
    for byte: ties, NaN, +-inf and signed zeros, uneven chunks, both directions, with and without
    the threshold pass; a matrix's blocks of rows and columns likewise."""
    cupy = _cupy()
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    import spira.dask

    rng = np.random.default_rng(7)
    v = rng.integers(-4, 5, 40_000).astype(np.float32)
    u = rng.random(v.size)
    v[u < 0.06], v[(u >= 0.06) & (u < 0.09)], v[(u >= 0.09) & (u < 0.12)] = np.nan, np.inf, -np.inf
    v[(u >= 0.12) & (u < 0.2)] = -0.0
    v[:5000] = rng.random(5000, dtype=np.float32)  # a chunk of distinct values too
    gv = cupy.asarray(v)
    for chunks in (4096, (10_000, 1, 20_000, 9_999)):
        for k in (1, 16, 700, v.size):
            for largest in (True, False):
                for prune in (True, False):
                    x = da.from_array(gv, chunks=chunks, asarray=False)
                    assert type(x._meta).__module__.startswith("cupy")
                    got = dask.compute(*spira.dask.select_k(x, k, largest=largest, prune=prune),
                                       scheduler="synchronous")
                    want = spira.select_k(v, k, largest=largest, device="cpu")
                    label = (chunks, k, largest, prune)
                    assert isinstance(got[0], np.ndarray), label
                    np.testing.assert_array_equal(got[1], want[1], err_msg=str(label))
                    assert got[0].tobytes() == want[0].tobytes(), label
    m = v[: 30 * 1000].reshape(30, 1000)
    x = da.from_array(cupy.asarray(m), chunks=(7, 300), asarray=False)
    got = dask.compute(*spira.dask.select_k(x, 50, sorted=False), scheduler="synchronous")
    want = spira.select_k(m, 50, sorted=False, device="cpu")
    np.testing.assert_array_equal(got[1], want[1])
    assert got[0].tobytes() == want[0].tobytes()
    with pytest.raises(ValueError, match="CuPy chunks"):
        spira.dask.select_k(x, 5, device="cpu")


@pytest.mark.parametrize("which", ["symmetrize", "fuzzy_union"])
def test_graph_unions_on_the_gpu_equal_the_host(which):
    """spira.graph on a cupyx.scipy.sparse graph: computed on its GPU, the host's result bit for
    bit (values whose a + b - ab rounds), in CuPy; duplicates in a row are refused as on the host."""
    cupy = _cupy()
    import cupyx.scipy.sparse as cusp

    import spira.graph

    rng = np.random.default_rng(7)
    n, k = 500, 12
    rows = np.repeat(np.arange(n), k)
    cols = rng.integers(0, n, size=n * k)
    G = sp.csr_matrix((rng.random(n * k).astype(np.float32), (rows, cols)), shape=(n, n))
    G.sum_duplicates()
    G.data = np.minimum(G.data, 1).astype(np.float32)
    fn = getattr(spira.graph, which)
    want = fn(G)
    got = fn(cusp.csr_matrix(G))
    assert isinstance(got, cusp.csr_matrix)
    got = got.get()
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_array_equal(got.indices, want.indices)
    assert got.data.dtype == np.float32
    np.testing.assert_array_equal(got.data.view(np.uint32), want.data.view(np.uint32))
    with pytest.raises(ValueError, match="square"):
        fn(cusp.csr_matrix(cupy.ones((3, 4), dtype=cupy.float32)))
