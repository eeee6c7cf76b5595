"""spira.dask on a LocalCluster of two worker processes: the distributed k-NN graph equals the
single-process spira.kneighbors byte for byte (distances as bytes, indices exactly) for several
row blockings (uneven ones, blocks of one row and empty blocks included) and metrics, on random
data full of ties and exact duplicates and on the bundled KOS corpus; exclude_self across
blocks; separate queries; kneighbors_graph against spira.kneighbors_graph; row blocks from and to
files; errors; and a worker process killed during the run."""

import gzip
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

da = pytest.importorskip("dask.array", reason="spira.dask needs dask[array]")
distributed = pytest.importorskip("distributed", reason="the tests need dask.distributed")
import dask  # noqa: E402

from conftest import arm_to_die, compute_while_a_worker_dies  # noqa: E402

import spira  # noqa: E402
import spira.dask  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KOS = ROOT / "data" / "uci-bow-kos" / "docword.kos.mtx.gz"

# Row blockings of 240 rows: one block, even blocks, uneven ones with blocks of one row and an
# empty block.
BLOCKINGS = [(240,), (60, 60, 60, 60), (1, 53, 0, 7, 100, 1, 78)]


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


def tied_points(rows, cols, seed):
    """Non-negative CSR rows with many equal distances: small integer counts, half of the rows
    with random weights, and exact duplicates of rows placed in other blocks."""
    rng = np.random.default_rng(seed)
    dense = rng.integers(1, 4, size=(rows, cols)) * (rng.random((rows, cols)) < 0.25)
    dense = dense.astype(np.float64)
    weighted = rng.random(rows) < 0.5
    dense[weighted] *= rng.uniform(0.5, 1.5, size=(weighted.sum(), cols))
    dense[np.arange(rows), rng.integers(0, cols, rows)] += 1.0  # no empty rows
    for src, dst in [(0, 200), (0, 61), (5, 120), (130, 7), (239, 2), (60, 59)]:
        if max(src, dst) < rows:
            dense[dst] = dense[src]
    return sp.csr_matrix(dense)


@pytest.fixture(scope="module")
def points():
    return tied_points(240, 24, 7)


@pytest.fixture(scope="module")
def kos():
    """The first 400 documents of the KOS corpus (word counts), float64 CSR."""
    with gzip.open(KOS) as f:
        m = scipy.io.mmread(f)
    return sp.csr_matrix(m)[:400].astype(np.float64)


def blocks(X, chunks):
    """X as a Dask array of CSR row blocks."""
    return da.from_array(X, chunks=(tuple(chunks), (X.shape[1],)), asarray=False)


def assert_identical(got, want, label=""):
    (d, i), (d0, i0) = got, want
    assert d.dtype == np.float32 and i.dtype == np.int64, label
    assert d.shape == d0.shape and i.shape == i0.shape, label
    np.testing.assert_array_equal(i, i0, err_msg=label)
    assert d.tobytes() == d0.tobytes(), label


def run_cases(client, X, cases, Y=None, y_chunks=None, **kw):
    """spira.dask.kneighbors for every (chunks, options) case in one compute, each compared with
    spira.kneighbors on the whole matrix."""
    lazy, want = [], []
    for chunks, opts in cases:
        Yd = None if Y is None else blocks(Y, y_chunks or chunks)
        lazy.append(spira.dask.kneighbors(blocks(X, chunks), Yd, **opts, **kw))
        want.append(spira.kneighbors(X, Y, **opts, **kw))
    got = dask.compute(*lazy)
    for g, w, case in zip(got, want, cases):
        assert_identical(g, w, f"{case} {kw}")


@pytest.mark.parametrize(
    "metric, p",
    [("euclidean", 2), ("cosine", 2), ("inner_product", 2), ("manhattan", 2),
     ("jensenshannon", 2), ("minkowski", 3), ("chebyshev", 2), ("jaccard", 2)],
)
def test_equals_single_process(client, points, metric, p):
    cases = [(chunks, {"n_neighbors": k, "exclude_self": ex})
             for chunks in BLOCKINGS for k, ex in [(9, False), (9, True)]]
    cases += [(BLOCKINGS[2], {"n_neighbors": 120, "exclude_self": False})]
    run_cases(client, points, cases, metric=metric, p=p)


def test_every_index_a_neighbour(client, points):
    # k = n (the point itself and every other) and k = n - 1 with exclude_self: padding must
    # never reach the result.
    n = points.shape[0]
    cases = [(BLOCKINGS[1], {"n_neighbors": n}), (BLOCKINGS[2], {"n_neighbors": n}),
             (BLOCKINGS[2], {"n_neighbors": n - 1, "exclude_self": True})]
    run_cases(client, points, cases, metric="cosine")


@pytest.mark.parametrize("metric", ["cosine", "inner_product", "jensenshannon", "euclidean"])
def test_equals_single_process_on_kos(client, kos, metric):
    uneven = (13, 150, 1, 96, 140)
    cases = [((100,) * 4, {"n_neighbors": 15}), (uneven, {"n_neighbors": 15}),
             (uneven, {"n_neighbors": 15, "exclude_self": True})]
    run_cases(client, kos, cases, metric=metric)


def test_duplicates_across_blocks(client, points):
    # Rows 0, 61 and 200 are equal and lie in three blocks: each is first in its own row (the
    # point before the duplicates at distance 0), and exclude_self removes only its own index.
    chunks = BLOCKINGS[1]
    X = blocks(points, chunks)
    (d, i), (de, ie) = dask.compute(spira.dask.kneighbors(X, n_neighbors=4),
                                    spira.dask.kneighbors(X, n_neighbors=4, exclude_self=True))
    for row, others in [(0, [61, 200]), (61, [0, 200]), (200, [0, 61])]:
        assert i[row, :3].tolist() == [row] + others and (d[row, :3] == 0).all()
        assert ie[row, :2].tolist() == others and (de[row, :2] == 0).all()
    assert_identical((d, i), spira.kneighbors(points, n_neighbors=4))
    assert_identical((de, ie), spira.kneighbors(points, n_neighbors=4, exclude_self=True))


def test_separate_queries(client, points, kos):
    Y = tied_points(70, 24, 8)
    cases = [(BLOCKINGS[1], {"n_neighbors": 10}), (BLOCKINGS[2], {"n_neighbors": 10})]
    run_cases(client, points, cases, Y=Y, y_chunks=(20, 0, 49, 1), metric="manhattan")
    run_cases(client, points, cases, Y=points, y_chunks=(100, 140), metric="inner_product")
    # Float32 queries against a float64 index compute in float64, as spira.kneighbors does.
    Yf = Y.astype(np.float32)
    got = spira.dask.kneighbors(blocks(points, (80, 160)), blocks(Yf, (35, 35)), n_neighbors=6,
                                metric="cosine")
    assert_identical(dask.compute(*got), spira.kneighbors(points, Yf, n_neighbors=6,
                                                          metric="cosine"))


def test_dense_and_float32_blocks(client, points):
    dense = points.toarray().astype(np.float32)
    X = da.from_array(dense, chunks=((50, 50, 140), 24))
    got = dask.compute(*spira.dask.kneighbors(X, n_neighbors=7, exclude_self=True))
    assert_identical(got, spira.kneighbors(dense, n_neighbors=7, exclude_self=True))


def test_deep_merge_tree(client, points):
    # 12 blocks merged two (three) at a time: three (two) levels of merges per query block.
    X = blocks(points, (20,) * 12)
    for split_every in (2, 3):
        got = dask.compute(*spira.dask.kneighbors(X, n_neighbors=12, split_every=split_every))
        assert_identical(got, spira.kneighbors(points, n_neighbors=12))


def test_results_are_lazy_row_blocks(client, points):
    X = blocks(points, BLOCKINGS[2])
    d, i = spira.dask.kneighbors(X, n_neighbors=5, metric="cosine")
    assert isinstance(d, da.Array) and isinstance(i, da.Array)
    assert d.chunks == i.chunks == (BLOCKINGS[2], (5,))
    assert d.dtype == np.float32 and i.dtype == np.int64
    # Persisted on the client: the results stay on the workers until gathered.
    dp, ip = spira.dask.kneighbors(X, n_neighbors=5, metric="cosine", client=client)
    assert_identical((dp.compute(), ip.compute()), spira.kneighbors(points, n_neighbors=5,
                                                                    metric="cosine"))


@pytest.mark.parametrize("mode", ["connectivity", "distance"])
@pytest.mark.parametrize("include_self", [False, True])
def test_graph_equals_single_process(client, points, mode, include_self):
    X = blocks(points, BLOCKINGS[2])
    want = spira.kneighbors_graph(points, 8, mode=mode, include_self=include_self,
                                  metric="euclidean")
    G = spira.dask.kneighbors_graph(X, 8, mode=mode, include_self=include_self)
    assert isinstance(G, da.Array) and G.shape == (240, 240) and G.dtype == np.float64
    got = spira.dask.kneighbors_graph(X, 8, mode=mode, include_self=include_self, compute=True)
    assert type(got) is type(want) is sp.csr_matrix
    assert got.indices.dtype == want.indices.dtype == np.int64
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_array_equal(got.indices, want.indices)
    assert got.data.tobytes() == want.data.tobytes()
    stacked = G.compute()  # scipy's vstack of the blocks: the same entries
    np.testing.assert_array_equal(stacked.indices, want.indices)
    assert stacked.data.tobytes() == want.data.tobytes()


def test_blocks_from_and_to_files(client, points, tmp_path):
    rows = [(0, 70), (70, 71), (71, 240)]
    paths = []
    for b, (r0, r1) in enumerate(rows):
        part = points[r0:r1]
        if b == 1:  # other formats and index types are read as CSR
            part = part.tocoo()
        paths.append(tmp_path / f"rows-{b}.npz")
        sp.save_npz(paths[-1], part)
    X = spira.dask.from_files(paths)
    assert X.shape == points.shape and X.chunks[0] == (70, 1, 169)
    want = spira.kneighbors(points, n_neighbors=6, metric="cosine")
    got = dask.compute(*spira.dask.kneighbors(X, n_neighbors=6, metric="cosine"))
    assert_identical(got, want)
    # Dense .npy blocks.
    dense = []
    for b, (r0, r1) in enumerate(rows):
        dense.append(tmp_path / f"dense-{b}.npy")
        np.save(dense[-1], points[r0:r1].toarray())
    got = dask.compute(*spira.dask.kneighbors(spira.dask.from_files(dense), n_neighbors=6,
                                              metric="cosine"))
    assert_identical(got, want)
    # The graph written block by block and read back.
    G = spira.dask.kneighbors_graph(X, 6, mode="distance", metric="cosine")
    written = spira.dask.to_files(G, tmp_path / "graph", prefix="knn")
    assert [os.path.basename(p) for p in written] == [f"knn-{b:05d}.npz" for b in range(3)]
    back = sp.vstack([sp.load_npz(p) for p in written])
    want_graph = spira.kneighbors_graph(points, 6, mode="distance", metric="cosine")
    np.testing.assert_array_equal(back.indices, want_graph.indices)
    assert back.data.tobytes() == want_graph.data.tobytes()


def test_docs_example_runs():
    # docs/distributed.md quotes examples/dask_knn.py: a script with its own LocalCluster.
    script = ROOT / "examples" / "dask_knn.py"
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "identical to spira.kneighbors; graph 4000 x 4000, 60000 edges" in res.stdout


def test_docstring_examples(client):
    import doctest

    import spira.dask._knn

    assert doctest.testmod(spira.dask._knn).failed == 0


def test_from_files_errors(tmp_path):
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    sp.save_npz(a, sp.random(3, 4, density=0.5, format="csr"))
    sp.save_npz(b, sp.random(3, 5, density=0.5, format="csr"))
    with pytest.raises(ValueError, match="different numbers of columns"):
        spira.dask.from_files([a, b])
    np.save(tmp_path / "c.npy", np.ones((3, 4)))
    with pytest.raises(ValueError, match="mix sparse"):
        spira.dask.from_files([a, tmp_path / "c.npy"])
    (tmp_path / "d.txt").write_text("1 2\n")
    with pytest.raises(ValueError, match="unknown file type"):
        spira.dask.from_files([tmp_path / "d.txt"])
    with pytest.raises(ValueError, match="no paths"):
        spira.dask.from_files([])


def test_argument_errors(points):
    X = blocks(points, BLOCKINGS[1])
    with pytest.raises(TypeError, match="dask.array.Array of row blocks"):
        spira.dask.kneighbors(points, n_neighbors=3)
    with pytest.raises(ValueError, match="n_neighbors <= 239"):
        spira.dask.kneighbors(X, n_neighbors=240, exclude_self=True)
    with pytest.raises(ValueError, match="n_neighbors <= 239"):
        spira.dask.kneighbors_graph(X, 240)
    with pytest.raises(ValueError, match="cannot be combined with Y"):
        spira.dask.kneighbors(X, X, n_neighbors=3, exclude_self=True)
    with pytest.raises(ValueError, match="unknown metric 'cosinus'"):
        spira.dask.kneighbors(X, n_neighbors=3, metric="cosinus")
    with pytest.raises(ValueError, match="p"):
        spira.dask.kneighbors(X, n_neighbors=3, metric="minkowski", p=0.5)
    with pytest.raises(ValueError, match="features"):
        spira.dask.kneighbors(X, blocks(points[:, :5], (240,)), n_neighbors=3)
    with pytest.raises(ValueError, match="device"):
        spira.dask.kneighbors(X, n_neighbors=3, device="gpu")
    with pytest.raises(ValueError, match="split_every"):
        spira.dask.kneighbors(X, n_neighbors=3, split_every=1)
    with pytest.raises(ValueError, match="mode"):
        spira.dask.kneighbors_graph(X, 3, mode="weights")
    Z = da.ones((10, 3), chunks=5)
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        spira.dask.kneighbors(Z[Z[:, 0] > 0], n_neighbors=3)  # rows of unknown number


def test_bad_data_raises_when_computed(client, points):
    bad = points.copy()
    bad.data[bad.indptr[130]] = -1.0  # row 130: negative, which jensenshannon rejects
    d, i = spira.dask.kneighbors(blocks(bad, BLOCKINGS[1]), n_neighbors=3,
                                 metric="jensenshannon")
    with pytest.raises(ValueError, match="120:180.*non-negative"):
        dask.compute(d, i)


def test_worker_killed_during_the_run(client, points, tmp_path):
    marker = str(tmp_path / "died")
    dense = points.toarray()
    X = da.from_array(dense, chunks=((40,) * 6, 24))
    X = X.map_blocks(arm_to_die, marker, 5, 4, dtype=dense.dtype, meta=np.empty((0, 0)))
    got, stream, died = compute_while_a_worker_dies(
        client, marker, *spira.dask.kneighbors(X, n_neighbors=10, metric="cosine"))
    parts = [t for t in stream if "-part" in str(t["key"])]
    assert any(t["startstops"][-1]["stop"] < died for t in parts)  # the worker died after tasks ran
    assert len(parts) < 2 * 36  # only what the dead worker ran or held is computed again
    assert_identical(got, spira.kneighbors(dense, n_neighbors=10, metric="cosine"))
