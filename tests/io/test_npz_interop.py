#!/usr/bin/env python3
"""Interoperability of spira's readers and writers with numpy and scipy.

Files written by numpy/scipy (np.save of several dtypes and orders, scipy.sparse.save_npz compressed
and uncompressed, scipy.io.mmwrite) are read by io_roundtrip_tool, whose printed shape, nnz and
position-weighted checksum are compared with the same quantities computed here; files written by
spira (write_npz, write_npy, write_mm) are read back with numpy.load / scipy.io.mmread.

Usage: test_npz_interop.py PATH/TO/io_roundtrip_tool
Exit status 77 (reported by CTest as skipped) when numpy or scipy is missing.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"SKIP: numpy/scipy not importable ({e})")
    sys.exit(77)

TOOL = sys.argv[1]
checks = 0


def tool(*args):
    out = subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"io_roundtrip_tool {' '.join(map(str, args))} failed: {out.stderr}")
    return out.stdout.split()


def weights(rows, cols):
    i = np.arange(rows, dtype=np.int64)[:, None]
    j = np.arange(cols, dtype=np.int64)[None, :]
    return 1.0 + ((31 * i + 17 * j) % 101).astype(np.float64)


def sparse_checksum(a):
    c = sp.coo_matrix(a)
    c.sum_duplicates()
    w = 1.0 + ((31 * c.row.astype(np.int64) + 17 * c.col.astype(np.int64)) % 101)
    return float(np.sum(c.data.astype(np.float64) * w)), c.nnz


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def check_csr(path, a):
    global checks
    rows, cols, nnz, s = tool("csr", path)
    want_sum, want_nnz = sparse_checksum(a)
    assert (int(rows), int(cols)) == a.shape, (path, rows, cols, a.shape)
    assert int(nnz) == want_nnz, (path, nnz, want_nnz)
    assert close(float(s), want_sum), (path, s, want_sum)
    checks += 1


def check_dense(path, a):
    global checks
    a2 = a.reshape(-1, 1) if a.ndim == 1 else a
    rows, cols, s = tool("dense", path)
    want = float(np.sum(a2.astype(np.float64) * weights(*a2.shape)))
    assert (int(rows), int(cols)) == a2.shape, (path, rows, cols, a2.shape)
    assert close(float(s), want), (path, s, want)
    checks += 1


def main():
    global checks
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as d:
        # scipy.sparse.save_npz: CSR and CSC, compressed (deflate) and stored, several dtypes.
        for k, (dtype, idx) in enumerate([(np.float64, np.int32), (np.float32, np.int64),
                                          (np.int64, np.int32), (np.bool_, np.int32)]):
            a = sp.random(60, 45, density=0.08, format="csr", random_state=k, dtype=np.float64)
            a.data = (a.data * 10 - 3).astype(dtype) if dtype != np.bool_ else a.data > 0.3
            a.indices = a.indices.astype(idx)
            a.indptr = a.indptr.astype(idx)
            for compressed in (True, False):
                for fmt in ("csr", "csc"):
                    p = os.path.join(d, f"m{k}_{fmt}_{compressed}.npz")
                    sp.save_npz(p, a.asformat(fmt), compressed=compressed)
                    check_csr(p, a)
        # Unsorted indices and duplicates (scipy keeps them as given).
        a = sp.csr_matrix((np.array([1.0, 2.0, 4.0]), np.array([3, 1, 3]), np.array([0, 3, 3])),
                          shape=(2, 5))
        p = os.path.join(d, "dups.npz")
        sp.save_npz(p, a)
        check_csr(p, a)

        # numpy.save: dtypes, 1-D, fortran order, big-endian, version 2.0.
        base = rng.integers(-50, 50, size=(7, 5))
        arrays = {
            "f8": base.astype(np.float64) / 3, "f4": base.astype(np.float32) / 7,
            "i4": base.astype(np.int32), "i8": base.astype(np.int64),
            "u1": np.abs(base).astype(np.uint8), "b1": base > 0, "i2": base.astype(np.int16),
            "fortran": np.asfortranarray(base.astype(np.float64)),
            "bigendian": base.astype(">f8"), "vec": base[:, 0].astype(np.float64),
        }
        for name, arr in arrays.items():
            p = os.path.join(d, f"{name}.npy")
            np.save(p, arr)
            check_dense(p, arr)
        p = os.path.join(d, "v2.npy")
        with open(p, "wb") as f:
            np.lib.format.write_array(f, base.astype(np.float64), version=(2, 0))
        check_dense(p, base.astype(np.float64))
        # A dense .npy through read_matrix becomes the CSR of its nonzeros.
        p = os.path.join(d, "dense_as_csr.npy")
        np.save(p, base.astype(np.float64))
        check_csr(p, sp.csr_matrix(base.astype(np.float64)))

        # Matrix Market written by scipy, general and symmetric; spira's writer read by scipy.
        a = sp.random(30, 20, density=0.2, format="coo", random_state=3)
        p = os.path.join(d, "g.mtx")
        scipy.io.mmwrite(p, a)
        check_csr(p, a)
        s = sp.random(25, 25, density=0.1, random_state=4)
        s = (s + s.T).tocoo()
        p = os.path.join(d, "s.mtx")
        scipy.io.mmwrite(p, s, symmetry="symmetric")
        check_csr(p, s)
        out = os.path.join(d, "converted.mtx")
        src = os.path.join(d, "m0_csr_True.npz")
        tool("convert", src, out)
        back = scipy.io.mmread(out).tocsr()
        orig = sp.load_npz(src).tocsr()
        assert back.shape == orig.shape and (back != orig).nnz == 0, "npz -> mtx differs"
        checks += 1

        # .npz written by spira, read by numpy.load.
        p = os.path.join(d, "out.npz")
        # The classic layout, and every zip64 record (what a member or archive over 4 GiB gets).
        for extra in ((), ("zip64",)):
            tool("write-npz", p, *extra)
            z = np.load(p)
            assert sorted(z.files) == ["counts", "indices", "labels", "values"], z.files
            assert z["indices"].dtype == np.int64 and z["indices"].shape == (3, 2)
            assert z["indices"].tolist() == [[0, 2], [1, 0], [2, 1]]
            assert z["values"].dtype == np.float32 and z["values"].shape == (3, 2)
            assert np.array_equal(z["values"], np.array([[0.5, 1.25], [-2.0, 3.0e-8],
                                                         [1.0e30, 0.0]], dtype=np.float32))
            assert z["labels"].dtype == np.float64 and z["labels"].tolist() == [1.0, -1.0, 0.5, 2.0]
            assert z["counts"].dtype == np.int32 and z["counts"].tolist() == [[1, 2, 3],
                                                                              [-4, 5, 2147483647]]
            if extra:
                import zipfile
                with zipfile.ZipFile(p) as zf:
                    assert zf.testzip() is None
                    assert all(i.extract_version >= 45 for i in zf.infolist())
                with open(p, "rb") as f:
                    assert b"PK\x06\x06" in f.read(), "no zip64 end record"
            checks += 1
        # .npy written by spira, read by numpy.load.
        expected = (10 * np.arange(3)[:, None] + np.arange(4)[None, :] - 5)
        for t, dt in (("f4", np.float32), ("f8", np.float64), ("i4", np.int32), ("i8", np.int64)):
            p = os.path.join(d, f"w_{t}.npy")
            tool("write-npy", p, t)
            arr = np.load(p)
            assert arr.dtype == dt and arr.shape == (3, 4), (t, arr.dtype, arr.shape)
            assert np.array_equal(arr, expected.astype(dt)), t
            checks += 1
    print(f"test_npz_interop: {checks} checks passed")


if __name__ == "__main__":
    main()
