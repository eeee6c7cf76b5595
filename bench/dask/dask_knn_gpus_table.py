#!/usr/bin/env python3
"""The multi-GPU section of docs/distributed.md (between its "dask_knn_gpus" markers) and
docs/bench-dask-gpus.png from a result of bench/dask/dask_knn_gpus.py (never typed by hand).

usage: bench/dask/dask_knn_gpus_table.py bench/results/dask_knn_gpus-DATE.json
"""

import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import command, finish_plot, new_plot, write_section  # noqa: E402
DOC = os.path.join(ROOT, "docs", "distributed.md")
BEGIN, END = "<!-- dask_knn_gpus: begin -->", "<!-- dask_knn_gpus: end -->"
KINDS = (("spira-kneighbors-part", "block pairs (GPU)"), ("spira-kneighbors-merge", "merges (CPU)"),
         ("spira-kneighbors-result", "results (CPU)"))


def median_run(d):
    """The run of a distributed case with the median wall time (the faster of two)."""
    runs = sorted(d["runs"], key=lambda r: r["wall_s"])
    return runs[(len(runs) - 1) // 2]


def tables(result):
    head = ["| rows | nonzeros | one GPU, `spira.kneighbors` (s) |"
            + "".join(f" {d['gpus']} GPU{'s' if d['gpus'] > 1 else ''}, `spira.dask` (s) |"
                      for d in result["cases"][0]["distributed"])
            + " scaling 1 → N GPUs | N GPUs against one GPU | graph |",
            "| ---: | ---: | ---: |" + " ---: |" * len(result["cases"][0]["distributed"])
            + " ---: | ---: | --- |"]
    parts = ["| rows | GPUs | wall (s) | "
             + " | ".join(f"{label} (s)" for _, label in KINDS)
             + " | transfers (s) | not in a task (s) |",
             "| ---: | ---: | ---: | " + " | ".join("---:" for _ in KINDS) + " | ---: | ---: |"]
    for c in result["cases"]:
        one = statistics.median(c["single_gpu_times"])
        ds = c["distributed"]
        meds = [statistics.median(d["times"]) for d in ds]
        n = ds[-1]["gpus"]
        eff = meds[0] / (n * meds[-1])
        runs = [r for d in ds for r in d["runs"]]
        same_i = min(r["indices_equal_fraction"] for r in runs)
        same_d = min(r["distances_equal_fraction"] for r in runs)
        diff = max(r["max_abs_diff"] for r in runs)
        total = c["rows"] * result["params"]["k"]
        graph = ("identical" if all(r["identical"] for r in runs) else
                 f"indices {'identical' if same_i == 1 else f'{same_i:.7f} equal'}; "
                 f"{round((1 - same_d) * total):,} of {total:,} distances differ, by at most "
                 f"{diff:.1e}")
        head.append(f"| {c['rows']:,} | {c['nnz']:,} | {one:.2f} | "
                    + " | ".join(f"{m:.2f}" for m in meds)
                    + f" | {meds[0] / meds[-1]:.2f}× ({eff:.0%} of {n}×) | {one / meds[-1]:.2f}× "
                    f"| {graph} |")
        for d in ds:
            r = median_run(d)
            busy = sum(r["compute_s"].values()) / d["gpus"] + r["transfer_s"] / d["gpus"]
            parts.append(f"| {c['rows']:,} | {d['gpus']} | {r['wall_s']:.1f} | "
                         + " | ".join(f"{r['compute_s'].get(k, 0.0):.1f}" for k, _ in KINDS)
                         + f" | {r['transfer_s']:.1f} | {max(r['wall_s'] - busy, 0.0):.1f} |")
    return "\n".join(head), "\n".join(parts)


def findings(result):
    """The figures the prose beside the tables refers to, from the result."""
    out = []
    for c in result["cases"]:
        one = statistics.median(c["single_gpu_times"])
        ds = c["distributed"]
        meds = [statistics.median(d["times"]) for d in ds]
        out.append(f"- {c['rows']:,} rows: {ds[0]['gpus']} → {ds[-1]['gpus']} GPUs "
                   f"{meds[0] / meds[-1]:.2f}× faster; {ds[-1]['gpus']} GPUs against one "
                   f"`spira.kneighbors` call {one / meds[-1]:.2f}×; one worker against that call "
                   f"{meds[0] / one:.2f}× the time.")
    c = result["cases"][-1]
    r = median_run(c["distributed"][0])
    out.append(f"- {c['rows']:,} rows on one worker: block-pair tasks "
               f"{r['compute_s'].get(KINDS[0][0], 0.0):.1f} s against "
               f"{statistics.median(c['single_gpu_times']):.1f} s for the single call; merges "
               f"{r['compute_s'].get(KINDS[1][0], 0.0):.1f} s.")
    return "\n".join(out)


def plot(result, path):
    made = new_plot()
    if made is None:
        return
    plt, fig, ax = made
    for j, c in enumerate(result["cases"]):
        g = [d["gpus"] for d in c["distributed"]]
        t = [statistics.median(d["times"]) for d in c["distributed"]]
        ax.plot(g, t, "o-", color=f"C{j}", label=f"spira.dask, {c['rows']:,} rows")
        ax.axhline(statistics.median(c["single_gpu_times"]), color=f"C{j}", ls="--",
                   label=f"spira.kneighbors on one GPU, {c['rows']:,} rows")
    gpus = ", ".join(sorted(set(result["machine"]["gpus"])))
    finish_plot(ax, fig, g, "seconds for the whole graph",
                f"k-NN graph, SEC EDGAR shape, {result['params']['metric']}, "
                f"k = {result['params']['k']} ({gpus})", path)


def main():
    src = sys.argv[1]
    with open(src) as f:
        result = json.load(f)
    times, parts = tables(result)
    p, v = result["params"], result["versions"]
    rel = os.path.relpath(os.path.abspath(src), ROOT)
    gpus = result["machine"]["gpus"]
    section = f"""{BEGIN}
Generated by `bench/dask/dask_knn_gpus_table.py` from `{rel}`; regenerate with
`{command(result['command'])}`. Machine: {len(gpus)} × {gpus[0]}, {result['machine']['cores']} cores; spira
{v['spira']}, dask {v['dask']}, distributed {v['distributed']}, dask-cuda {v['dask_cuda']}. Data:
synthetic sets of the SEC EDGAR shape ({p['cols']:,} columns), {p['blocks']} row blocks held by the
workers; the {p['k']} nearest neighbours under `{p['metric']}`, results gathered on the client;
median of {p['repeats']} runs.

{times}

Where the time goes (the run with the median time; task times are summed over the workers, so
they exceed the wall time with several GPUs; "not in a task" is the wall time less the tasks and
transfers per worker: scheduling, the client, idle workers):

{parts}

The figures the text below refers to:

{findings(result)}

![time against GPUs](bench-dask-gpus.png)
{END}"""
    write_section(DOC, BEGIN, END, section)
    plot(result, os.path.join(ROOT, "docs", "bench-dask-gpus.png"))


if __name__ == "__main__":
    main()
