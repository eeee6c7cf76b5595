"""Row blocks in files: spira.dask.from_files (a Dask array with one chunk per file) and
spira.dask.to_files (one file per block of a Dask array)."""

from __future__ import annotations

import os
import zipfile

import dask.array as da
import numpy as np
import scipy.sparse as sp
from dask.base import tokenize
from dask.delayed import Delayed
from dask.highlevelgraph import HighLevelGraph

__all__ = ["from_files", "to_files"]

_SPARSE_FORMATS = ("csr", "csc", "coo", "bsr", "dia", "dok", "lil")


def _npy_header(f):
    """(shape, dtype) of the .npy stream ``f`` from its header alone."""
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(f)
    else:
        shape, _, dtype = np.lib.format.read_array_header_2_0(f)
    return shape, dtype


def _describe(path):
    """``(sparse, rows, cols, dtype)`` of one file, read from its headers only."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npy":
        with open(path, "rb") as f:
            shape, dtype = _npy_header(f)
        if len(shape) != 2:
            raise ValueError(f"{path}: expected a 2-D array, got shape {shape}")
        return False, int(shape[0]), int(shape[1]), dtype
    if ext == ".npz":
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            if not {"format.npy", "shape.npy", "data.npy"} <= names:
                raise ValueError(
                    f"{path}: not a sparse matrix written by scipy.sparse.save_npz (it holds "
                    f"{sorted(names)})"
                )
            with z.open("format.npy") as f:
                fmt = np.lib.format.read_array(f).item()
            fmt = fmt.decode() if isinstance(fmt, bytes) else str(fmt)
            with z.open("shape.npy") as f:
                shape = tuple(int(s) for s in np.lib.format.read_array(f))
            with z.open("data.npy") as f:
                _, dtype = _npy_header(f)
        if fmt not in _SPARSE_FORMATS or len(shape) != 2:
            raise ValueError(f"{path}: unexpected sparse format {fmt!r} or shape {shape}")
        return True, shape[0], shape[1], dtype
    raise ValueError(
        f"{path}: unknown file type {ext!r} (expected .npz from scipy.sparse.save_npz or .npy "
        "from numpy.save)"
    )


def _load(path, sparse, dtype):
    """One block: the file's rows as a CSR matrix (.npz) or an ndarray (.npy), of ``dtype``."""
    if sparse:
        m = sp.load_npz(path)
        m = sp.csr_matrix(m) if not isinstance(m, sp.csr_matrix) else m
    else:
        m = np.load(path)
    return m if m.dtype == dtype else m.astype(dtype)


def from_files(paths):
    """A Dask array whose row blocks are files: one chunk per file, in the order given.

    Only the files' headers are read here (on the client); each block is loaded by the task that
    needs it, so the whole matrix never exists in one process. The files must be readable under
    the same paths by the client and every worker (a shared file system).

    Parameters
    ----------
    paths : sequence of str or os.PathLike
        Files of rows, all with the same number of columns, all of one kind: ``.npz`` written by
        :func:`scipy.sparse.save_npz` (any format; loaded as CSR) or ``.npy`` written by
        :func:`numpy.save` (2-D, dense).

    Returns
    -------
    dask.array.Array of shape (sum of the files' rows, n_features)
        Chunks of one file each: ``scipy.sparse.csr_matrix`` for ``.npz``, ``ndarray`` for
        ``.npy``; the dtype the files' dtypes promote to.

    Raises
    ------
    ValueError
        No paths, an unknown file type, files of both kinds, arrays that are not 2-D, or numbers
        of columns that differ.
    OSError
        A file that cannot be read.

    Examples
    --------
    >>> import scipy.sparse as sp, spira.dask  # doctest: +SKIP
    >>> for b in range(4):  # doctest: +SKIP
    ...     sp.save_npz(f"rows-{b}.npz", sp.random(2500, 1000, density=0.01, format="csr"))
    >>> X = spira.dask.from_files([f"rows-{b}.npz" for b in range(4)])  # doctest: +SKIP
    >>> X.shape, X.numblocks  # doctest: +SKIP
    ((10000, 1000), (4, 1))
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise ValueError("from_files: no paths given")
    described = [_describe(p) for p in paths]
    kinds = {sparse for sparse, _, _, _ in described}
    if len(kinds) > 1:
        raise ValueError("from_files: the files mix sparse (.npz) and dense (.npy) blocks")
    sparse = kinds.pop()
    cols = {c for _, _, c, _ in described}
    if len(cols) > 1:
        detail = ", ".join(f"{p}: {c}" for p, (_, _, c, _) in zip(paths, described))
        raise ValueError(f"from_files: the files have different numbers of columns ({detail})")
    dtype = np.result_type(*[d for _, _, _, d in described])
    stats = [(os.path.getsize(p), os.path.getmtime(p)) for p in paths]
    name = "spira-from-files-" + tokenize(paths, stats)
    dsk = {(name, b, 0): (_load, p, sparse, dtype) for b, p in enumerate(paths)}
    chunks = (tuple(r for _, r, _, _ in described), (cols.pop(),))
    meta = sp.csr_matrix((0, 0), dtype=dtype) if sparse else np.empty((0, 0), dtype)
    return da.Array(HighLevelGraph.from_collections(name, dsk), name, chunks, meta=meta)


def _save(block, path):
    if sp.issparse(block):
        sp.save_npz(path, sp.csr_matrix(block))
    else:
        np.save(path, np.asarray(block))
    return path


def _paths(*paths):
    return list(paths)


def to_files(A, directory, *, prefix="block", compute=True):
    """Writes every row block of a Dask array to its own file, block by block on the workers.

    Parameters
    ----------
    A : dask.array.Array of 2 dimensions
        For example the graph of :func:`kneighbors_graph` or an array of :func:`kneighbors`.
        Several chunks of columns are joined first.
    directory : str or os.PathLike
        Where the files go (created when missing); it must be writable by the workers under the
        same path.
    prefix : str, default="block"
        File names are ``{prefix}-{b:05d}.npz`` for sparse blocks (:func:`scipy.sparse.save_npz`,
        CSR) and ``{prefix}-{b:05d}.npy`` for dense ones (:func:`numpy.save`), ``b`` the block.
    compute : bool, default=True
        Write now and return the paths; else return a ``dask.delayed`` object that does it.

    Returns
    -------
    list of str, or dask.delayed.Delayed
        The paths, in block order; :func:`from_files` reads them back.
    """
    if not isinstance(A, da.Array) or A.ndim != 2:
        raise TypeError("to_files: A must be a 2-D dask.array.Array")
    if len(A.chunks[1]) > 1:
        A = A.rechunk({1: -1})
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    ext = ".npz" if sp.issparse(A._meta) else ".npy"
    paths = [os.path.join(directory, f"{prefix}-{b:05d}{ext}") for b in range(A.numblocks[0])]
    name = "spira-to-files-" + tokenize(A, paths)
    dsk = {(name, b): (_save, row[0], p) for b, (row, p) in enumerate(zip(A.__dask_keys__(),
                                                                              paths))}
    dsk[name] = (_paths, *[(name, b) for b in range(len(paths))])
    out = Delayed(name, HighLevelGraph.from_collections(name, dsk, dependencies=[A]))
    return out.compute() if compute else out
