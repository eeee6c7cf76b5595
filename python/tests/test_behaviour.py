"""Behaviour of long calls: Ctrl-C ends them between tiles with KeyboardInterrupt and leaves the
interpreter healthy, progress=True shows a bar (tqdm's, or a line on stderr without tqdm), and the
GIL is released while the library computes."""

import os
import signal
import sys
import threading
import time

import numpy as np
import pytest
from conftest import assert_same_run_to_run, heap_bytes, oracle, random_sparse

import spira

needs_main_thread = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="signals reach Python in the main thread only",
)


@pytest.fixture(scope="module")
def big():
    """8,000 x 30 dense points: a full k-NN graph takes seconds (20 tiles of 400 queries)."""
    return np.random.default_rng(7).random((8000, 30))


def long_call(name, X, progress):
    if name == "kneighbors":
        return spira.kneighbors(X, n_neighbors=5, progress=progress, device="cpu")
    if name == "kneighbors_graph":
        return spira.kneighbors_graph(X, 5, progress=progress, device="cpu")
    return spira.pairwise_distances(X, progress=progress, device="cpu")


class Armed:
    """A SIGINT handler that raises KeyboardInterrupt only while armed, so that a signal that
    arrives after the call cannot end the test session."""

    def __init__(self):
        self.armed = False
        self.fired = 0

    def __call__(self, signum, frame):
        self.fired += 1
        if self.armed:
            raise KeyboardInterrupt

    def __enter__(self):
        self.previous = signal.signal(signal.SIGINT, self)
        return self

    def __exit__(self, *exc):
        signal.signal(signal.SIGINT, self.previous)


@needs_main_thread
@pytest.mark.parametrize("name", ["kneighbors", "kneighbors_graph", "pairwise_distances"])
def test_ctrl_c_ends_a_long_call_between_tiles(big, name):
    # A thread sends SIGINT to this process once the first tile is reported: the call must end
    # with KeyboardInterrupt long before its last tile.
    reports = []
    started = threading.Event()

    def progress(done, total):
        reports.append((done, total))
        started.set()

    def interrupt():
        started.wait(60)
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=interrupt)
    with Armed() as handler:
        handler.armed = True
        sender.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                long_call(name, big, progress)
        finally:
            handler.armed = False
            sender.join()
    assert handler.fired == 1
    assert reports and reports[-1][0] < reports[-1][1] == big.shape[0]
    # The interpreter and the library are fine afterwards.
    X = random_sparse(40, 8, 0.5, 3)
    d, i = spira.kneighbors(X, n_neighbors=4)
    np.testing.assert_allclose(d, np.sort(oracle("euclidean", X, X), axis=1)[:, :4], rtol=1e-5,
                               atol=1e-6)


@needs_main_thread
def test_ctrl_c_with_the_default_handler_and_no_progress(big):
    # The plain case: Python's own SIGINT handler, no progress; a small memory budget makes tiles
    # of 256 queries. The call alone takes seconds; the interrupt comes after 0.3 s. The handler
    # is the one Python installs at startup, set here because a process started with SIGINT
    # ignored (a background job of a non-interactive shell, as CI may run the tests) keeps
    # ignoring it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            spira.kneighbors(big, n_neighbors=5, memory_budget=4 << 20, device="cpu")
    finally:
        timer.join()
        signal.signal(signal.SIGINT, previous)
    assert time.perf_counter() - start < 3.0


def test_an_exception_raised_by_progress_ends_the_call_and_propagates():
    X = np.random.default_rng(1).random((3000, 10))
    seen = []

    def progress(done, total):
        seen.append(done)
        if done >= 1000:
            raise ZeroDivisionError("stop here")

    # The host backend reports between blocks of rows, so the call ends before the last block
    # (on a GPU a call this small may end before its first report).
    with pytest.raises(ZeroDivisionError, match="stop here"):
        spira.kneighbors(X, n_neighbors=3, progress=progress, device="cpu")
    assert seen[-1] < 3000
    with pytest.raises(ZeroDivisionError, match="stop here"):
        spira.pairwise_distances(X, progress=progress, device="cpu")


@pytest.mark.skipif(heap_bytes() is None, reason="no way to read the heap's size here")
def test_interrupted_calls_leak_nothing():
    # Every interrupted call has allocated its result (2,000 x 10 x 12 bytes) and a tile before
    # it is stopped: the unwinding must free them.
    X = np.random.default_rng(2).random((2000, 8))

    def stop(done, total):
        raise KeyboardInterrupt

    def interrupted_calls(n):
        for _ in range(n):
            with pytest.raises(KeyboardInterrupt):
                spira.kneighbors(X, n_neighbors=10, progress=stop)

    interrupted_calls(5)  # warm-up: allocator pools, first-call caches
    before = heap_bytes()
    interrupted_calls(50)
    assert heap_bytes() - before < 1 << 20  # 50 leaked results alone would be 12 MB


def test_progress_callable_sees_every_tile():
    # The host backend's tiles (test_cuda.py checks the reports of the CUDA backend).
    X = np.random.default_rng(3).random((2600, 6))
    Q = X[:1200]
    reports = []
    d, i = spira.kneighbors(X, Q, n_neighbors=3, device="cpu",
                            progress=lambda *a: reports.append(a))
    done = [r[0] for r in reports]
    assert all(total == 1200 for _, total in reports)
    assert done == sorted(done) and done[-1] == 1200 and len(done) >= 4
    reports.clear()
    spira.pairwise_distances(X, device="cpu", progress=lambda *a: reports.append(a))
    assert reports[-1] == (2600, 2600) and len(reports) >= 10


def hide_tqdm(monkeypatch):
    # An entry of None in sys.modules makes the import raise ImportError.
    for name in ("tqdm", "tqdm.auto"):
        monkeypatch.setitem(sys.modules, name, None)


def test_progress_true_without_tqdm_prints_a_line_on_stderr(monkeypatch, capsys):
    hide_tqdm(monkeypatch)
    X = np.random.default_rng(4).random((1000, 5))
    # The host backend's blocks of 256 rows (a GPU may finish this before its first report).
    spira.kneighbors(X, n_neighbors=3, progress=True, device="cpu")
    err = capsys.readouterr().err
    assert err.startswith("\rspira.kneighbors: 256/1,000 rows ( 26%), ")
    assert "1,000/1,000 rows (100%)" in err and err.endswith("\n")
    spira.pairwise_distances(X[:600], X, progress=True)
    err = capsys.readouterr().err
    assert "spira.pairwise_distances: 600/600 rows (100%)" in err
    spira.kneighbors(X, n_neighbors=3)
    assert capsys.readouterr().err == ""  # progress=False is silent


def test_progress_true_uses_tqdm_when_installed(capsys):
    pytest.importorskip("tqdm")
    X = np.random.default_rng(5).random((1000, 5))
    G = spira.kneighbors_graph(X, 3, progress=True)
    err = capsys.readouterr().err
    assert "spira.kneighbors" in err and "100%" in err and "1.00k/1.00k" in err
    assert G.nnz == 3 * 1000


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_progress_must_be_a_bool_or_a_callable(bad):
    with pytest.raises(TypeError, match="progress"):
        spira.kneighbors(np.eye(3), n_neighbors=1, progress=bad)


def test_the_gil_is_released_during_a_call(big):
    # While a thread computes, the main thread keeps running Python: the longest pause it sees
    # is far shorter than the call.
    result = {}

    def work():
        # Calls for at least 0.6 s, whatever the machine's speed; the time of one call is what a
        # pause of the main thread is compared with.
        start = time.perf_counter()
        calls = 0
        while time.perf_counter() - start < 0.6:
            result["d"] = spira.pairwise_distances(big[:2000], big, device="cpu")
            calls += 1
        result["seconds"] = (time.perf_counter() - start) / calls

    worker = threading.Thread(target=work)
    ticks = [time.perf_counter()]
    worker.start()
    while worker.is_alive():
        time.sleep(0.002)
        ticks.append(time.perf_counter())
    worker.join()
    assert result["seconds"] > 0.05, "the call is too short to tell"
    assert max(np.diff(ticks)) < result["seconds"] / 4


def test_calls_from_several_threads_give_the_sequential_results():
    # Calls from other threads without progress make no reports (the library's own tiles).
    X = random_sparse(700, 40, 0.2, 6)
    want = spira.kneighbors(X, n_neighbors=8, metric="cosine")
    results = [None] * 4

    def work(t):
        results[t] = spira.kneighbors(X, n_neighbors=8, metric="cosine")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for d, i in results:
        np.testing.assert_array_equal(i, want[1])
        assert_same_run_to_run(d, want[0])
