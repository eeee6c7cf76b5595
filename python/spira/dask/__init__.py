"""spira.dask: exact k-NN graphs of Dask arrays of row blocks, on any Dask scheduler or cluster.

Each task computes the k-NN of one block of query rows against one block of index rows with the
local backend (the worker's GPU when it has one, else its CPU) and the partial results merge in a
tree with :func:`spira.merge_knn`. On the host backend the result is byte for byte that of
:func:`spira.kneighbors` on the whole matrix, for any number of workers and any row blocks.

- :func:`kneighbors` -- ``(distances, indices)`` as Dask arrays of row blocks
- :func:`kneighbors_graph` -- the k-NN graph as a Dask array of CSR row blocks
- :func:`select_k` -- the top-k of a vector (or of each row) held in Dask chunks, as
  :func:`spira.select_k` on the whole array
- :func:`from_files` -- a Dask array of row blocks from ``.npz`` / ``.npy`` files
- :func:`to_files` -- every row block of a Dask array to its own file

Needs ``dask[array]`` (and ``distributed`` for a cluster): ``pip install "spira[dask]"``.
``docs/distributed.md`` shows a local cluster, one worker per GPU with dask-cuda and a
multi-node cluster.
"""

try:
    import dask.array  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        'spira.dask needs dask: pip install "dask[array]" distributed (or "spira[dask]")'
    ) from e

from ._files import from_files, to_files
from ._knn import kneighbors, kneighbors_graph
from ._select import select_k

__all__ = ["from_files", "kneighbors", "kneighbors_graph", "select_k", "to_files"]
