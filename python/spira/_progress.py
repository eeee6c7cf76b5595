"""Progress reports of long calls: a tqdm bar when tqdm is installed, else one line on stderr.

The compiled core calls the reporter after each tile (k-NN) or block of rows (pairwise
distances) with ``(rows done, total rows)``, holding the GIL for that moment; between those
calls it also runs the Python signal handlers, so that Ctrl-C ends the computation with
``KeyboardInterrupt`` whether or not progress is shown.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager

import numpy as np

__all__ = ["check_progress", "reporter"]


def check_progress(progress):
    """Checks the ``progress`` argument: a bool or a callable ``progress(done, total)``."""
    if callable(progress):
        return progress
    if isinstance(progress, (bool, np.bool_)):
        return bool(progress)
    raise TypeError(
        f"progress must be True, False or a callable(done, total), got {type(progress).__name__}"
    )


class _Line:
    """A one-line report on stderr, rewritten in place: ``desc: done/total rows (p%), t s``."""

    def __init__(self, desc, total):
        self.desc, self.total = desc, total
        self.start = time.perf_counter()
        self.file = sys.stderr  # looked up now: pytest's capsys and redirections apply
        self.shown = False

    def update(self, done):
        pct = 100.0 * done / self.total if self.total else 100.0
        elapsed = time.perf_counter() - self.start
        self.file.write(
            f"\r{self.desc}: {done:,}/{self.total:,} rows ({pct:3.0f}%), {elapsed:.1f} s"
        )
        self.file.flush()
        self.shown = True

    def close(self):
        if self.shown:
            self.file.write("\n")
            self.file.flush()


class _Bar:
    """tqdm's bar, advanced to ``done``."""

    def __init__(self, tqdm, desc, total):
        self.bar = tqdm(total=total, desc=desc, unit="rows", unit_scale=True)
        self.done = 0

    def update(self, done):
        self.bar.update(done - self.done)
        self.done = done

    def close(self):
        self.bar.close()


@contextmanager
def reporter(progress, desc, total):
    """The callable the core reports to (None without progress), closed when the call ends.

    Parameters
    ----------
    progress : bool or callable
        False: no report; True: tqdm's bar when tqdm is importable, else a line on stderr;
        a callable: called as ``progress(done, total)``, it may raise to stop the call.
    desc : str
        The label of the bar (the function's name).
    total : int
        The rows the call will report (queries, or rows of X).
    """
    if progress is False:
        yield None
        return
    if progress is not True:  # a user's callable
        yield progress
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:
        shown = _Line(desc, total)
    else:
        shown = _Bar(tqdm, desc, total)
    try:
        yield lambda done, _total: shown.update(done)
    finally:
        shown.close()
