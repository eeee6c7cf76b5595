#!/usr/bin/env python3
"""docs/bench-dask.md and docs/bench-dask.png from a result of bench/dask/dask_knn.py.

usage: bench/dask/dask_knn_table.py bench/results/dask_knn-DATE.json
           [--out docs/bench-dask.md]
"""

import argparse
import json
import os
import shlex
import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rerun_command(command):
    """The recorded command line with the driver's path of today: a result keeps the path it was
    run under, which older results give from before the benchmarks moved into one folder each."""
    driver = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dask_knn.py")
    args = shlex.split(command)[1:]
    if "--out" in args:  # where the machine that ran it wrote, not part of the measurement
        i = args.index("--out")
        del args[i:i + 2]
    return shlex.join([os.path.relpath(driver, ROOT)] + args)


def plot(result, path):
    """Speed-up over the single process on one thread against the workers (CPU), with the ideal
    line and the single process on all cores; nothing without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no plot")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = result["runs"]
    base = statistics.median(single(runs, "cpu")["times"])
    dask = sorted((r for r in runs if r["kind"] == "dask" and r["device"] == "cpu"),
                  key=lambda r: r["workers"])
    w = [r["workers"] for r in dask]
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    ax.plot(w, [base / statistics.median(r["times"]) for r in dask], "o-",
            label="spira.dask.kneighbors, N workers x 1 thread")
    ax.plot(w, w, ":", color="grey", label="ideal (N x one thread)")
    many = [r for r in runs if r["kind"] == "single" and r["device"] == "cpu"
            and r["threads"] > 1]
    for r in many:
        ax.axhline(base / statistics.median(r["times"]), color="C1", ls="--",
                   label=f"spira.kneighbors, one process, {r['threads']} threads")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(w, [str(x) for x in w])
    ax.set_xlabel("workers")
    ax.set_ylabel("speed-up over one thread")
    p = result["params"]
    ax.set_title(f"k-NN graph on Dask: {p['rows']:,} rows, {p['metric']}, k = {p['k']}\n"
                 f"{result['machine']['label'] or result['machine']['cpu']}", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def label(run):
    if run["kind"] == "single":
        where = "GPU" if run["device"] == "cuda" else f"{run['threads']} thread(s)"
        return f"single process (`spira.kneighbors`), {where}"
    where = "GPU worker" if run["device"] == "cuda" else "worker(s) × 1 thread"
    return f"`spira.dask.kneighbors`, {run['workers']} {where}"


def single(runs, device, threads=1):
    return next((r for r in runs if r["kind"] == "single" and r["device"] == device
                 and (device == "cuda" or r["threads"] == threads)), None)


def overhead(runs, r):
    """A one-worker run's time over the single-process time on the same device, minus one."""
    ref = single(runs, r["device"])
    if r["kind"] != "dask" or r["workers"] != 1 or ref is None:
        return None
    return statistics.median(r["times"]) / statistics.median(ref["times"]) - 1


def table(result):
    runs = result["runs"]
    base = statistics.median(single(runs, "cpu")["times"])
    lines = ["| run | median s | runs (s) | speed-up vs 1 thread | per worker or thread | "
             "overhead vs single process | result |",
             "| --- | ---: | --- | ---: | ---: | ---: | --- |"]
    for r in runs:
        med = statistics.median(r["times"])
        n = r.get("workers", r.get("threads", 1)) if r["device"] == "cpu" else None
        o = overhead(runs, r)
        if r["kind"] == "single":
            check = "reference" if r is single(runs, r["device"]) else "—"
        elif r.get("identical"):
            check = "byte-identical"
        else:
            check = f"differs (max abs diff {r['max_abs_diff']:.2g})"
        lines.append("| {} | {:.2f} | {} | {:.2f}× | {} | {} | {} |".format(
            label(r), med, ", ".join(f"{t:.2f}" for t in r["times"]), base / med,
            "—" if n is None else f"{base / med / n:.2f}×", "—" if o is None else f"{o:+.1%}",
            check))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "bench-dask.md"))
    args = ap.parse_args()
    with open(args.result) as f:
        result = json.load(f)
    m, p, v = result["machine"], result["params"], result["versions"]
    rel = os.path.relpath(os.path.abspath(args.result), ROOT)
    one = [r for r in result["runs"] if overhead(result["runs"], r) is not None]
    summary = "".join(
        f"\n\nOverhead of the distributed path with one {'GPU ' if r['device'] == 'cuda' else ''}"
        f"worker against the single-process call on the same device: "
        f"**{overhead(result['runs'], r):+.1%}** (target: under 15%)." for r in one)
    note = os.path.splitext(args.result)[0] + ".note.md"
    note = (f" Run note: `{os.path.relpath(os.path.abspath(note), ROOT)}`."
            if os.path.exists(note) else "")
    load = m.get("load_average")
    load = f"; load average (1 min) {load[0]:.1f} before, {load[1]:.1f} after the runs" if load else ""
    text = f"""# Exact k-NN graphs on Dask: single process against 1 to N workers

Generated by `bench/dask/dask_knn_table.py` from `{rel}`; regenerate with
`{rerun_command(result['command'])}` (`docs/distributed.md` describes `spira.dask`).{note}

- Machine: {m['label'] + ': ' if m['label'] else ''}{m['cpu']}, {m['cores']} cores{load}.
- Versions: spira {v['spira']}, dask {v['dask']}, distributed {v['distributed']}.
- Data: synthetic float32 CSR, {p['rows']:,} × {p['cols']:,}, density {p['density']}
  ({p['nnz']:,} nonzeros), in {p['blocks']} row blocks that the workers generate and hold before
  the clock starts.
- Work: the {p['k']} nearest neighbours of every row under `{p['metric']}`, results gathered on
  the client; {p['repeats']} runs each.
- Workers: `LocalCluster(n_workers=N, threads_per_worker=1, processes=True)` with
  `OMP_NUM_THREADS=1` in each. The single process runs on its own with `OMP_NUM_THREADS` threads.
- "overhead vs single process": the time with one worker over the single-process time on the same
  device (one thread, or the GPU), minus one: the cost of the tasks, the merges and the scheduler.

{table(result)}{summary}

![speed-up against workers]({os.path.splitext(os.path.basename(args.out))[0]}.png)
"""
    with open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {args.out}")
    plot(result, os.path.splitext(args.out)[0] + ".png")


if __name__ == "__main__":
    main()
