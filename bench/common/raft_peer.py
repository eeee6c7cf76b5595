"""RAFT 25.10 as a measured peer: the raft_anchor harness (../shared/tools/peers/raft_anchor.cu,
built by raft-build.sh there) run as a subprocess, for the drivers that compare with it
(bench/knn/knn.py: `spknn`; bench/pairwise/pairwise_gpu.py: `spdist`).

raft_anchor reads a Matrix Market file (write_mtx), takes the first NQ rows as the queries and all
rows as the index, copies the CSR to the device once and times the RAFT call with CUDA events on its
stream: the median of 10 runs after 3 warm-ups (RAFT_RUNS a process), printed as `median_ms=`.
Failures print `error=...` on stdout and exit non-zero (1: arguments, 2: no CUDA device, 3: any
exception, e.g. out of memory); a crash exits by a signal. run_anchor turns every one of them,
and a process past its time, into a RuntimeError, so that the drivers record it as a result.
capped_rows runs a case on a query prefix first and on all rows only when that fits a time limit.
"""
import hashlib
import os
import subprocess
import sys
import time

RAFT_RUNS = 13  # 3 warm-ups + 10 timed
RAFT_VERSION = "25.10.00"
# spira's metric -> raft_anchor's (parse_metric in raft_anchor.cu; its l2 is the square root form).
RAFT_METRICS = {"cosine": "cosine", "euclidean": "l2", "manhattan": "l1", "chebyshev": "linf",
                "jensenshannon": "js"}


def write_mtx(x, path):
    """The CSR as a Matrix Market file that raft_anchor's read_mtx reads back unchanged: coordinate
    real general (never 'symmetric', which would keep one triangle), float32 values in full."""
    import scipy.io
    scipy.io.mmwrite(path, x, field="real", precision=9, symmetry="general")


def require_binary(binary):
    """Raises RuntimeError unless binary is an executable file."""
    if not binary or not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise RuntimeError(f"RAFT peer not found ({binary or 'unset'}): build raft_anchor with "
                           "../shared/tools/peers/raft-build.sh and pass --raft or "
                           "$SPIRA_RAFT_PEER")


def run_anchor(cmd, rows, timeout, produced=()):
    """One raft_anchor process (cmd: the program and its arguments) on `rows` query rows:
    (median ms, facts from its output, seconds of the process). The facts are its lines
    median_ms=, error=, device=... and the words of `matrix rows= cols= nnz= ...` and
    `times_ms min= max=`. Raises RuntimeError with its message when it fails, runs past timeout,
    prints no median or leaves a file of `produced` missing."""
    print("==", " ".join(cmd), file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"raft_anchor on {rows} query rows did not finish within "
                           f"{timeout:.0f} s") from None
    wall = time.perf_counter() - t0
    facts = {}
    for line in (res.stdout + "\n" + res.stderr).splitlines():
        head, _, rest = line.partition(" ")
        if line.startswith(("median_ms=", "error=", "device=")):
            key, _, value = line.partition("=")
            facts[key] = value.strip()
        elif head in ("matrix", "times_ms"):
            facts.update(w.split("=", 1) for w in rest.split() if "=" in w)
    if (res.returncode != 0 or "median_ms" not in facts
            or not all(os.path.exists(p) for p in produced)):
        tail = " ".join(res.stderr.split())[-400:]
        raise RuntimeError(
            f"raft_anchor exit {res.returncode}: {facts.get('error', '')} {tail}".strip())
    return float(facts["median_ms"]), facts, wall


def run_record(ms, wall, facts, rows):
    """What a record's "runs" list keeps of one process."""
    return dict(rows=rows, median_ms=ms, wall_s=round(wall, 3), min_ms=to_float(facts.get("min")),
                max_ms=to_float(facts.get("max")))


def capped_rows(rec, n, probe_rows, limit, run):
    """A case capped at `limit` seconds of raft_anchor processes: a probe on the first probe_rows
    query rows, then all n rows when RAFT_RUNS runs of them (and the process' own overhead: reading
    the file, the copies, the context, as the probe measured it) fit the limit, else the largest
    prefix that fits when it is at least twice the probe. run(rows, expected_seconds) returns
    (median ms, seconds of the process, payload) or raises RuntimeError; a failure of the larger run
    is kept in rec["larger_run_error"] and the probe stands. Returns (median ms, rows, payload) of
    the largest run that succeeded; the caller projects ms * n / rows when rows < n."""
    probe = min(n, probe_rows)
    ms, wall, payload = run(probe, 3 * limit)
    rows = probe
    per_row_s = 1e-3 * ms / probe
    overhead = max(0.0, wall - RAFT_RUNS * 1e-3 * ms)
    if probe < n:
        fits = int((limit - overhead) / (RAFT_RUNS * per_row_s)) if per_row_s > 0 else n
        target = n if fits >= n else fits
        if target == n or target >= 2 * probe:  # the whole case, or a prefix worth the run
            expected = overhead + RAFT_RUNS * per_row_s * target
            try:
                ms, wall, payload = run(target, 2 * expected + 60)
                rows = target
            except RuntimeError as e:  # the probe's projection stands; the failure is kept
                rec["larger_run_error"] = str(e)[:400]
    return ms, rows, payload


def to_float(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def raft_description(binary):
    """The RAFT peer's program: path, size and the start of its SHA-256, or why it is absent."""
    if not binary or not os.path.isfile(binary):
        return f"unavailable: raft_anchor not found ({binary or '--raft / SPIRA_RAFT_PEER unset'})"
    with open(binary, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    return (f"RAFT {RAFT_VERSION} raft_anchor {binary} ({os.path.getsize(binary):,} bytes, "
            f"sha256 {digest})")
