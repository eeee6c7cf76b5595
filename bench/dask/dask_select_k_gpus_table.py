#!/usr/bin/env python3
"""The multi-GPU top-k section of docs/distributed.md (between its "dask_select_k_gpus" markers)
and docs/bench-dask-select-gpus.png from a result of bench/dask/dask_select_k_gpus.py (never
typed by hand).

usage: bench/dask/dask_select_k_gpus_table.py bench/results/dask_select_k_gpus-DATE.json
"""

import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import command, finish_plot, new_plot, write_section  # noqa: E402
DOC = os.path.join(ROOT, "docs", "distributed.md")
BEGIN, END = "<!-- dask_select_k_gpus: begin -->", "<!-- dask_select_k_gpus: end -->"
# Task stages of spira.dask.select_k, grouped as the docs name them.
GROUPS = (("threshold pass", ("delegates", "delegate-merge", "threshold")),
          ("local selection", ("candidates",)), ("merges", ("merge", "result")))


def log2(n):
    return n.bit_length() - 1


def run_of(d, k, prune):
    return next(r for r in d["runs"] if r["k"] == k and r["prune"] == prune)


def single_ms(case, k):
    times = case["single_gpu"].get("k", {}).get(str(k))
    return 1e3 * statistics.median(times) if times else None


def tables(result):
    gpus = [d["gpus"] for d in result["cases"][0]["distributed"]]
    head = ("| n | k | one GPU, `spira.select_k` (ms) | "
            + " | ".join(f"{g} GPU{'s' if g > 1 else ''} (ms)" for g in gpus)
            + f" | scaling 1 → {gpus[-1]} GPUs | with the threshold pass, {gpus[-1]} GPUs (ms) "
            "| result |")
    times = [head, "| ---: | ---: | ---: |" + " ---: |" * len(gpus) + " ---: | ---: | --- |"]
    parts = ["| n | k | GPUs | threshold pass | wall (ms) | "
             + " | ".join(f"{label} (ms)" for label, _ in GROUPS)
             + " | transfers (ms) | not in a task (ms) |",
             "| ---: | ---: | ---: | --- | ---: | " + " | ".join("---:" for _ in GROUPS)
             + " | ---: | ---: |"]
    for c in result["cases"]:
        ds = c["distributed"]
        for k in result["params"]["k"]:
            meds = [1e3 * run_of(d, k, False)["median"] for d in ds]
            pruned = 1e3 * run_of(ds[-1], k, True)["median"]
            runs = [r for d in ds for r in d["runs"] if r["k"] == k]
            same = [r.get("identical") for r in runs]
            verdict = ("identical" if all(same) else
                       "not compared (one GPU cannot hold it)" if None in same else "DIFFERS")
            one = single_ms(c, k)
            times.append(f"| 2^{log2(c['n'])} | {k:,} | "
                         + (f"{one:.1f}" if one is not None else "does not fit") + " | "
                         + " | ".join(f"{m:.0f}" for m in meds)
                         + f" | {meds[0] / meds[-1]:.2f}× ({meds[0] / meds[-1] / gpus[-1]:.0%} of "
                         f"{gpus[-1]}×) | {pruned:.0f} | {verdict} |")
        if c is not result["cases"][-1]:
            continue
        for d in ds:
            for k in result["params"]["k"]:
                for prune in (False, True):
                    b = run_of(d, k, prune)["breakdown"]
                    comp = b["compute_s"]
                    busy = (sum(comp.values()) + b["transfer_s"]) / d["gpus"]
                    parts.append(
                        f"| 2^{log2(c['n'])} | {k:,} | {d['gpus']} | {'yes' if prune else 'no'} | "
                        f"{1e3 * b['wall_s']:.0f} | "
                        + " | ".join(f"{1e3 * sum(comp.get(s, 0.0) for s in stages):.0f}"
                                     for _, stages in GROUPS)
                        + f" | {1e3 * b['transfer_s']:.0f} | "
                        f"{1e3 * max(b['wall_s'] - busy, 0.0):.0f} |")
    return "\n".join(times), "\n".join(parts)


def findings(result):
    """The figures the prose beside the tables refers to, from the result."""
    ks, chunks = result["params"]["k"], result["params"]["chunks"]
    big = result["cases"][-1]
    singles = [single_ms(big, k) for k in ks if single_ms(big, k) is not None]
    runs = [r for c in result["cases"] for d in c["distributed"] for r in d["runs"]
            if not r["prune"]]
    # At the largest n, without the threshold pass: the time in no task, and the selections'.
    idle, selecting = [], []
    for d in big["distributed"]:
        for r in d["runs"]:
            if not r["prune"]:
                b = r["breakdown"]
                busy = (sum(b["compute_s"].values()) + b["transfer_s"]) / d["gpus"]
                idle.append(1e3 * (b["wall_s"] - busy))
                selecting.append(1e3 * b["compute_s"].get("candidates", 0.0))

    def span(xs, fmt="{:.0f}"):
        return f"{fmt.format(min(xs))}-{fmt.format(max(xs))}"

    def scaling(k):
        return [run_of(c["distributed"][0], k, False)["median"] /
                run_of(c["distributed"][-1], k, False)["median"] for c in result["cases"]]

    small_k = [x for k in ks if k <= 2048 for x in scaling(k)]
    one = big["distributed"][0]
    per_chunk = {
        "delegates": [1e3 * sum(run_of(one, k, True)["breakdown"]["compute_s"].get(s, 0.0)
                                for s in ("delegates", "delegate-merge", "threshold")) / chunks
                      for k in ks],
        "pruned": [1e3 * run_of(one, k, True)["breakdown"]["compute_s"].get("candidates", 0.0)
                   / chunks for k in ks],
        "whole": [1e3 * run_of(one, k, False)["breakdown"]["compute_s"].get("candidates", 0.0)
                  / chunks for k in ks],
    }
    out = []
    if singles:
        gbps = [4 * big["n"] / (t / 1e3) / 1e12 for t in singles]
        out.append(f"- One `spira.select_k` call on 2^{log2(big['n'])} values: "
                   f"{span(singles, '{:.1f}')} ms ({span(gbps, '{:.1f}')} TB/s read).")
    out += [
        f"- The distributed path (no threshold pass): {span([1e3 * r['median'] for r in runs])} ms "
        f"over all cases; at 2^{log2(big['n'])}, {span(idle)} ms of a run is in no task, and the "
        f"chunks' selections take {span(selecting)} ms summed over the workers.",
        f"- {one['gpus']} → {big['distributed'][-1]['gpus']} GPUs: "
        f"{span(small_k, '{:.2f}')}× for k up to 2,048, "
        f"{span(scaling(max(ks)), '{:.2f}')}× for k = {max(ks):,}.",
        f"- Per chunk on one GPU at 2^{log2(big['n'])}: the threshold pass "
        f"{span(per_chunk['delegates'], '{:.1f}')} ms, the pruned selection (compaction and "
        f"selection) {span(per_chunk['pruned'], '{:.1f}')} ms, the whole chunk's selection without "
        f"it {span(per_chunk['whole'], '{:.1f}')} ms.",
    ]
    return "\n".join(out)


def plot(result, path):
    made = new_plot()
    if made is None:
        return
    plt, fig, ax = made
    k = result["params"]["k"][len(result["params"]["k"]) // 2]
    for j, c in enumerate(result["cases"]):
        g = [d["gpus"] for d in c["distributed"]]
        t = [1e3 * run_of(d, k, False)["median"] for d in c["distributed"]]
        ax.plot(g, t, "o-", color=f"C{j}", label=f"spira.dask, n = 2^{log2(c['n'])}")
        one = single_ms(c, k)
        if one is not None:
            ax.axhline(one, color=f"C{j}", ls="--", label=f"spira.select_k on one GPU, 2^{log2(c['n'])}")
    gpus = ", ".join(sorted(set(result["machine"]["gpus"])))
    finish_plot(ax, fig, g, "milliseconds, results on the client",
                f"top-k of one float32 vector, k = {k:,} ({gpus})", path, legend_size=7,
                legend_cols=2)


def main():
    src = sys.argv[1]
    with open(src) as f:
        result = json.load(f)
    times, parts = tables(result)
    p, v = result["params"], result["versions"]
    rel = os.path.relpath(os.path.abspath(src), ROOT)
    gpus = result["machine"]["gpus"]
    section = f"""{BEGIN}
Generated by `bench/dask/dask_select_k_gpus_table.py` from `{rel}`; regenerate with
`{command(result['command'])}`. Machine: {len(gpus)} × {gpus[0]}, {result['machine']['cores']} cores; spira
{v['spira']}, dask {v['dask']}, distributed {v['distributed']}, dask-cuda {v['dask_cuda']}. Data:
{p['dtype']} vectors of n uniform values in [0, 1) (ties throughout), {p['chunks']} chunks held
in GPU memory by the workers (CuPy); the k largest with their indices, results on the client;
median of {p['repeats']} runs. The distributed columns are without the threshold pass (the
default for CuPy chunks); "result" compares every run, with and without it, with the single GPU's.

{times}

Where the time goes at the largest n (the run with the median time; task times are summed over
the workers; "not in a task" is the wall time less the tasks and transfers per worker:
scheduling, the client, idle workers):

{parts}

The figures the text below refers to:

{findings(result)}

![time against GPUs](bench-dask-select-gpus.png)
{END}"""
    write_section(DOC, BEGIN, END, section)
    plot(result, os.path.join(ROOT, "docs", "bench-dask-select-gpus.png"))


if __name__ == "__main__":
    main()
