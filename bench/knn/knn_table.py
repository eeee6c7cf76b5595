#!/usr/bin/env python3
"""Regenerates docs/bench-knn.md and docs/bench-knn.png from the k-NN benchmark's JSON lines
(bench/knn/knn.py); never edit those by hand.

usage: bench/knn/knn_table.py [--gpu bench/results/knn_gpu-DATE.jsonl]
                              [--host bench/results/knn_host-DATE.jsonl] [--out-dir docs]
A note written by whoever ran the benchmark (what was left out and why) is read from
RESULTS.note.md beside a results file (knn_gpu-DATE.note.md for knn_gpu-DATE.jsonl) when present.
Columns appear for what the run measured: RAFT (its time, RAFT / spira, the 20x target, its
agreement) when the file holds RAFT records, spira's device-in/device-out time and peak device
memory when it holds them (bench_knn --resident); older files render as before.
"""
import argparse
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The reference (ms, 16 cores) and its targets; RAFT is measured in the same run (knn.py).
SKLEARN_16_MS = {("20newsgroups", "cosine"): 10600}
TARGET_MS = {("20newsgroups", "cosine"): 60, ("20newsgroups", "manhattan"): 120}
# spira at least this many times faster than RAFT 25.10 on the same GPU in the same run.
RAFT_TARGET = 20.0
TOOLS = ("spira", "raft", "cusparse+torch", "sklearn")
NAMES = {"raft": "RAFT 25.10", "cusparse+torch": "cuSPARSE + torch.topk", "sklearn": "scikit-learn"}
SHORT = {"raft": "RAFT", "cusparse+torch": "cuSPARSE + topk", "sklearn": "scikit-learn"}  # ms
LABEL = {"raft": "RAFT", "cusparse+torch": "cuSPARSE", "sklearn": "scikit-learn"}  # ratio, agreement


def load(path):
    machine, rows = None, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            rec = json.loads(line)
            if rec.get("tool") == "machine":
                machine = rec
            else:
                rows.append(rec)
    return machine, rows


def note_of(path):
    """The run's note beside its results (RESULTS.note.md), or ''."""
    note = os.path.splitext(path)[0] + ".note.md"
    if not os.path.exists(note):
        return ""
    with open(note) as f:
        return f.read().strip()


def cases(rows):
    """{(dataset, metric): {tool: record}} in the order of first appearance."""
    out = {}
    for r in rows:
        if "metric" not in r:
            continue
        out.setdefault((r["dataset"], r["metric"]), {})[r["tool"]] = r
    return out


def shapes(rows):
    out = {}
    for r in rows:
        if r.get("tool") == "spira" and "rows" in r:
            out[r["dataset"]] = (r["rows"], r["cols"], r["nnz"])
    return out


def fmt_ms(v):
    if v is None:
        return "—"
    return f"{v:,.0f}" if v >= 100 else f"{v:,.1f}" if v >= 10 else f"{v:,.2f}"


# A peer whose neighbours agree with spira's on fewer than this share of the rows' entries returned
# a wrong graph (spira's own are checked against brute force by the tests and, here, by
# scikit-learn): its time is shown but not compared.
WRONG_RECALL = 0.99


def wrong(rec):
    return bool(rec) and rec.get("recall_vs_spira") is not None and \
        rec["recall_vs_spira"] < WRONG_RECALL


def cell(rec):
    """A tool's time, '≈' when projected from a probe, or why there is none."""
    if rec is None:
        return "—"
    if rec.get("unsupported"):
        return "no path"
    if rec.get("skipped"):
        return "not run"
    if rec.get("error"):
        return "failed"
    if rec.get("median_ms") is None:
        return "—"
    return ("wrong result, " if wrong(rec) else "") + ("≈ " if rec.get("extrapolated") else "") + \
        fmt_ms(rec["median_ms"])


def ratio(peer, spira, spira_ms=None):
    """peer / spira ('≈' when the peer's time is projected); spira_ms: spira's time to use (default
    its host-in/host-out median)."""
    if spira_ms is None and spira:
        spira_ms = spira.get("median_ms")
    if not peer or not spira or peer.get("median_ms") is None or spira_ms is None:
        return "—"
    if peer.get("error") or spira.get("error") or spira_ms <= 0 or wrong(peer):
        return "—"
    return ("≈ " if peer.get("extrapolated") else "") + f"{peer['median_ms'] / spira_ms:,.1f}×"


def resident_ms(spira):
    """spira's device-in/device-out time, or None."""
    if not spira or spira.get("resident_error") or spira.get("error"):
        return None
    return spira.get("resident_median_ms")


def device_ms(spira):
    """spira's time beside a device-in/device-out peer (RAFT): its device-resident time where
    measured, else its host-in/host-out time (copies included, in the peer's favour)."""
    r = resident_ms(spira)
    return r if r is not None else (spira or {}).get("median_ms")


def raft_times(raft, spira):
    """RAFT / spira on the device-in/device-out times, or None where there is no fair pair."""
    ms = device_ms(spira)
    if not raft or not spira or raft.get("median_ms") is None or ms is None or ms <= 0:
        return None
    if raft.get("error") or spira.get("error") or wrong(raft):
        return None
    return raft["median_ms"] / ms


def raft_target_cell(raft, spira):
    t = raft_times(raft, spira)
    if t is None:
        return "—"
    return ("≈ " if raft.get("extrapolated") else "") + ("met" if t >= RAFT_TARGET else "not met")


def resident_cell(spira):
    if not spira or not spira.get("resident"):
        return "—"
    if spira.get("resident_error"):
        return "failed"
    return fmt_ms(spira.get("resident_median_ms"))


def peak_cell(spira):
    b = (spira or {}).get("resident_peak_device_bytes")
    return "—" if b is None or resident_ms(spira) is None else f"{b / 2**20:,.0f}"


def agreement(rec):
    if not rec or rec.get("recall_vs_spira") is None:
        return "—"
    return f"{rec['recall_vs_spira']:.4f} / {rec['max_dist_diff']:.1e}"


def notes(rows):
    """Failures and skips, in words (the table only says 'failed')."""
    out = []
    for r in rows:
        if r.get("first_error") and not r.get("error"):
            out.append(f"- {r['tool']} on {r['dataset']}, {r['metric']}: {r['first_error']}; "
                       f"ran with blocks of {r.get('block_rows')} rows instead")
        if r.get("larger_run_error") and not r.get("error"):
            out.append(f"- {r['tool']} on {r['dataset']}, {r['metric']}: the run on more query "
                       f"rows failed ({r['larger_run_error']}); its time is projected from the "
                       f"first {r.get('measured_rows'):,} rows")
        if wrong(r):
            out.append(f"- {r['tool']} on {r['dataset']}, {r['metric']}: a wrong graph without an "
                       f"error (recall {r['recall_vs_spira']:.4f} of spira's neighbours, largest "
                       f"distance difference {r['max_dist_diff']:.1e}); its time is not compared")
        msg = r.get("error") if not r.get("unsupported") else None
        if msg or r.get("skipped"):
            what = f"{r.get('tool')} on {r.get('dataset')}" + (f", {r['metric']}" if "metric" in r else "")
            out.append(f"- {what}: {msg or r['skipped']}")
        if r.get("resident_error") and not r.get("error"):
            out.append(f"- spira device in/out on {r['dataset']}, {r['metric']}: "
                       f"{r['resident_error']}")
    return out


def gpu_name(machine):
    """'H200' from nvidia-smi's 'NVIDIA H200, 580.159.04, 143771 MiB'."""
    name = str(machine.get("gpu", "GPU")).split(",")[0].strip()
    return name[len("NVIDIA "):] if name.startswith("NVIDIA ") else name


def raft_target(cs):
    """The 20x-RAFT target over every case with a fair pair of times; cases without one listed."""
    met, below, projected, missing = 0, [], 0, []
    for (ds, metric), tools in cs.items():
        s, raft = tools.get("spira"), tools.get("raft")
        if not raft:
            continue
        t = raft_times(raft, s)
        if t is None:
            why = ("no RAFT path" if raft.get("unsupported") else "RAFT failed" if raft.get("error")
                   else "not run" if raft.get("skipped") else "wrong graph" if wrong(raft)
                   else "no spira time")
            missing.append(f"{ds} {metric} ({why})")
            continue
        projected += bool(raft.get("extrapolated"))
        if t >= RAFT_TARGET:
            met += 1
        else:
            below.append(f"{ds} {metric} ({'≈ ' if raft.get('extrapolated') else ''}{t:,.1f}×)")
    total = met + len(below)
    lines = ["", f"### Target: at least {RAFT_TARGET:g}× RAFT 25.10, same GPU, same run", ""]
    if total:
        verdict = "**met**" if not below else "**not met**"
        lines.append(f"- spira at least {RAFT_TARGET:g}× faster in {met} of {total} cases with "
                     f"both times: {verdict}" + (f" (below: {', '.join(below)})." if below else "."))
        if projected:
            lines.append(f"- {projected} of the {total} from RAFT times projected from a query "
                         "prefix (≈).")
    if missing:
        lines.append(f"- not compared: {', '.join(missing)} (see the notes).")
    return lines


def gpu_section(srcs, machine, rows, note):
    """srcs: the result files of one GPU session (several when its cases ran as several commands;
    their machine lines should name the same GPU: the table says so when they do not)."""
    cs, sh = cases(rows), shapes(rows)
    threads = machine.get("threads")
    gpu = gpu_name(machine)
    tools = {r["tool"] for r in rows if "metric" in r}
    ran = {r["tool"] for r in rows if r.get("median_ms") is not None or r.get("error")}
    has_raft = "raft" in tools
    has_resident = any(r.get("tool") == "spira" and r.get("resident") for r in rows)
    shown = [t for t in ("cusparse+torch", "sklearn") if t in tools]
    sklearn_text = (
        f"scikit-learn {machine.get('sklearn')}: `NearestNeighbors(algorithm='brute', "
        f"n_jobs={threads}).kneighbors(X)` on the machine's {machine['cores']} cores. "
        if "sklearn" in ran else
        "scikit-learn: not run on the GPU machine in this run (see the notes below); the issue "
        "measured 10.6 s on 16 cores for 20newsgroups cosine, and the 2-core comparison is in the "
        "next section. " if "sklearn" in tools else "")
    cusparse_text = (
        "cuSPARSE + torch.topk (cosine): from the CSR already on the device to the graph on the host: "
        "`X @ X.T` by cuSPARSE SpGEMM (CuPy) in row blocks, densified, cosine expansion, "
        "`torch.topk`. " if "cusparse+torch" in tools else "")
    raft_text = (
        "RAFT 25.10: `raft::sparse::neighbors::brute_force_knn` (raft_anchor, "
        "`../shared/tools/peers/raft_anchor.cu`) from the CSR on the device to the graph on the "
        "device, CUDA events, median of 10 runs after 3 warm-ups; like spira here it keeps each "
        "point in its own list. RAFT / spira and the 20× target compare it with spira's device in/out "
        "time (its host in/out time where that is missing). RAFT is capped at "
        f"{machine.get('raft_limit_s', 60):.0f} s of processes a case: '≈' marks a time projected "
        "linearly from the largest query prefix that fitted. " if has_raft else "")
    budget = next((r.get("budget_bytes") for r in rows if r.get("budget_bytes")), None)
    resident_text = (
        "spira device in/out: the same call on the CSR already in device memory, the graph left "
        "in device memory, timed to its completion; peak device MiB: the high-water mark of "
        "spira's device memory pool during that call, the device CSR and the graph included "
        "(bench/knn/knn_gpu.cpp)" + (f"; default memory budget {budget / 2**30:,.1f} GiB (half the "
                                     "free device memory)" if budget else "") + ". "
        if has_resident else "")
    title = f"## {gpu}: spira (CUDA)" + (" vs RAFT 25.10" if has_raft else "") + \
        "".join(f" vs {NAMES[t]}" for t in shown)
    lines = [
        title,
        "",
        f"From {' and '.join(f'`{os.path.relpath(p, ROOT)}`' for p in srcs)}: "
        f"{machine.get('gpu', 'GPU unknown')}; host CPU "
        f"{machine['cpu']}, {machine['cores']} cores; CuPy {machine.get('cupy')}, torch "
        f"{machine.get('torch')}. Full self-k-NN graphs, k = {machine['k']}, float32 CSR; "
        "milliseconds, median of the timed calls after a warm-up. "
        "spira: the `knn_graph` call with default parameters (host CSR in, host graph out; copies "
        "included). " + resident_text + raft_text + cusparse_text + sklearn_text +
        f"Peers are capped at {machine['peer_limit_s']:.0f} s a case: '≈' marks a time projected "
        f"linearly from the first {machine['probe_rows']:,} query rows (all rows of the index). "
        "Agreement: recall of spira's neighbours (an index tying with spira's k-th distance counts) "
        "and the largest difference between the sorted distance lists, on the rows the peer ran "
        "(a cosine difference of 1 comes from all-zero rows: spira puts two of them at distance 0, "
        "docs/metrics.md; scikit-learn at 1)." +
        (f" Code measured: {machine['spira_revision']}." if machine.get("spira_revision") else ""),
        "",
    ]
    if note:
        lines += [note, ""]
    # (header, cell of a case) for each column shown
    cols = [("spira ms", lambda t: cell(t.get("spira")))]
    if has_resident:
        cols += [("spira device in/out ms", lambda t: resident_cell(t.get("spira"))),
                 ("peak device MiB", lambda t: peak_cell(t.get("spira")))]
    if has_raft:
        cols += [("RAFT ms", lambda t: cell(t.get("raft")))]
    cols += [(f"{SHORT[p]} ms", lambda t, p=p: cell(t.get(p))) for p in shown]
    if has_raft:
        cols += [("RAFT / spira", lambda t: ratio(t.get("raft"), t.get("spira"),
                                                  device_ms(t.get("spira")))),
                 (f"{RAFT_TARGET:g}× RAFT", lambda t: raft_target_cell(t.get("raft"), t.get("spira")))]
    cols += [(f"{LABEL[p]} / spira", lambda t, p=p: ratio(t.get(p), t.get("spira"))) for p in shown]
    cols += [(f"agreement {LABEL[p]}", lambda t, p=p: agreement(t.get(p)))
             for p in (["raft"] if has_raft else []) + shown]
    lines += [
        "| dataset | rows × cols | nnz | metric | " + " | ".join(c[0] for c in cols) + " |",
        "| --- | --- | ---: | --- |" + " ---: |" * len(cols),
    ]
    for (ds, metric), t in cs.items():
        r, c, nnz = sh.get(ds, (0, 0, 0))
        lines.append(f"| {ds} | {r:,} × {c:,} | {nnz:,} | {metric} | " +
                     " | ".join(f(t) for _, f in cols) + " |")
    lines += ["", "### Targets (issue 7)", ""]
    for key, target in TARGET_MS.items():
        s = cs.get(key, {}).get("spira")
        if not s or s.get("median_ms") is None:
            lines.append(f"- {key[0]} {key[1]}: target under {target} ms — **no measurement**.")
            continue
        ms = s["median_ms"]
        verdict = "**met**" if ms < target else "**not met**"
        extra = ""
        if resident_ms(s) is not None:
            extra += f"; device in/out {fmt_ms(resident_ms(s))} ms"
        raft = cs.get(key, {}).get("raft")
        t = raft_times(raft, s)
        if t is not None:
            extra += (f"; RAFT 25.10 here: {'≈ ' if raft.get('extrapolated') else ''}"
                      f"{fmt_ms(raft['median_ms'])} ms ({t:,.1f}× spira's "
                      f"{'device in/out ' if resident_ms(s) is not None else ''}time)")
        if key in SKLEARN_16_MS:
            extra += f"; scikit-learn on 16 cores (issue): {SKLEARN_16_MS[key] / 1e3:.1f} s"
        sk = cs.get(key, {}).get("sklearn")
        if sk and sk.get("median_ms") is not None and not sk.get("error"):
            extra += (f"; scikit-learn here: {'≈ ' if sk.get('extrapolated') else ''}"
                      f"{sk['median_ms'] / 1e3:.1f} s")
        lines.append(f"- {key[0]} {key[1]}: spira {fmt_ms(ms)} ms against a target of {target} ms: "
                     f"{verdict}{extra}.")
    if has_raft:
        lines += raft_target(cs)
    n = notes(rows)
    if n:
        lines += ["", "### Failures and runs left out", ""] + n
    return lines


# The host backend's target against scikit-learn's brute force on the same threads.
HOST_TARGET = 3.0


def host_section(src, machine, rows, note):
    cs, sh = cases(rows), shapes(rows)
    threads = machine.get("threads")
    lines = [
        f"## {machine['cores']}-core host: spira (host backend) vs scikit-learn on the same {threads} cores",
        "",
        f"From `{os.path.relpath(src, ROOT)}`: {machine['cpu']}, {machine['cores']} cores; spira "
        f"with `host_resources{{.threads = {threads}}}`, scikit-learn {machine.get('sklearn')} with "
        f"`n_jobs={threads}`; OMP_WAIT_POLICY={machine.get('omp_wait_policy') or 'unset'} for both; "
        f"load average {machine.get('load_average', 0):.1f} when the run started (the machine is "
        "shared). Full self-k-NN graphs, "
        f"k = {machine['k']}, float32; milliseconds, median of the timed calls. '≈': projected "
        f"linearly from the first {machine['probe_rows']:,} query rows (scikit-learn capped at "
        f"{machine['peer_limit_s']:.0f} s a case). Agreement: recall of spira's neighbours (an "
        "index tying with spira's k-th distance counts) / largest difference between the sorted "
        "distance lists (a cosine difference of 1: all-zero rows, at distance 0 from each other in "
        "spira, 1 in scikit-learn).",
        "",
    ]
    if note:
        lines += [note, ""]
    lines += [
        "| dataset | rows × cols | nnz | metric | spira ms | scikit-learn ms | scikit-learn / spira | agreement (recall / max diff) |",
        "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    wins, losses = 0, []
    for (ds, metric), tools in cs.items():
        r, c, nnz = sh.get(ds, (0, 0, 0))
        s, sk = tools.get("spira"), tools.get("sklearn")
        lines.append(f"| {ds} | {r:,} × {c:,} | {nnz:,} | {metric} | {cell(s)} | {cell(sk)} | "
                     f"{ratio(sk, s)} | {agreement(sk)} |")
        if s and sk and s.get("median_ms") is not None and sk.get("median_ms") is not None:
            if sk["median_ms"] >= HOST_TARGET * s["median_ms"]:
                wins += 1
            else:
                losses.append(f"{ds} {metric} ({sk['median_ms'] / s['median_ms']:.2f}×)")
    lines += ["", f"### Target: at least {HOST_TARGET:g}× scikit-learn's brute force on the same "
              "cores", ""]
    total = wins + len(losses)
    if total:
        verdict = "**met**" if not losses else "**not met**"
        lines.append(f"- spira at least {HOST_TARGET:g}× faster in {wins} of {total} cases: "
                     f"{verdict}" + (f" (below: {', '.join(losses)})." if losses else "."))
    n = notes(rows)
    if n:
        lines += ["", "### Failures and runs left out", ""] + n
    return lines


def plot(sections, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(sections), 1, figsize=(12, 4.5 * len(sections)), squeeze=False)
    colours = {"spira": "#1b9e77", "spira-resident": "#66c2a5", "raft": "#e7298a",
               "cusparse+torch": "#7570b3", "sklearn": "#d95f02"}
    names = {"spira": "spira", "spira-resident": "spira, device in/out", **NAMES}

    def bar(tool, tools):
        """(ms, projected) of a tool in a case, or None."""
        if tool == "spira-resident":
            ms = resident_ms(tools.get("spira"))
            return None if ms is None else (ms, False)
        rec = tools.get(tool)
        if not rec or rec.get("median_ms") is None or rec.get("error"):
            return None
        return rec["median_ms"], bool(rec.get("extrapolated"))

    for ax, (title, rows) in zip(axes[:, 0], sections):
        cs = cases(rows)
        keys = list(cs)
        tools = [t for t in TOOLS if any(t in cs[k] for k in keys)]
        if any(resident_ms(cs[k].get("spira")) is not None for k in keys):
            tools.insert(1, "spira-resident")
        width = 0.8 / max(len(tools), 1)
        for ti, tool in enumerate(tools):
            for ki, key in enumerate(keys):
                b = bar(tool, cs[key])
                if b is None:
                    continue
                ax.bar(ki + (ti - (len(tools) - 1) / 2) * width, b[0], width,
                       color=colours[tool], hatch="//" if b[1] else None,
                       edgecolor="white" if not b[1] else "black", label=names[tool])
        handles, labels = ax.get_legend_handles_labels()
        uniq = dict(zip(labels, handles))
        ax.legend(uniq.values(), uniq.keys(), loc="upper right", fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("ms (log scale; hatched: projected)")
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([f"{d}\n{m}" for d, m in keys], rotation=60, ha="right", fontsize=7)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", action="append",
                    help="GPU results; repeat for the files of one session run as several commands")
    ap.add_argument("--host")
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "docs"),
                    help="where bench-knn.md and bench-knn.png go (default docs/)")
    args = ap.parse_args()
    if not args.gpu and not args.host:
        ap.error("give --gpu and/or --host")
    srcs = " and ".join(f"`{os.path.relpath(p, ROOT)}`" for p in (args.gpu or []) + [args.host] if p)
    lines = [
        "# k-NN graph benchmark",
        "",
        f"Generated by `bench/knn/knn_table.py` from {srcs} (written by `bench/knn/knn.py`, which "
        "times `bench_knn` - spira's `knn_graph` in-process - and its peers on the same float32 "
        "data); do not edit by hand. The plot, `bench-knn.png`, comes from the same files.",
        "",
        "![k-NN graph times](bench-knn.png)",
        "",
    ]
    sections = []
    if args.gpu:
        loaded = [load(p) for p in args.gpu]
        machine, rows = loaded[0][0], [r for _, part in loaded for r in part]
        note = "\n\n".join(n for n in map(note_of, args.gpu) if n)
        gpus = sorted({str(m.get("gpu")) for m, _ in loaded})
        if len(gpus) > 1:
            note = (note + "\n\n" if note else "") + \
                f"**The files come from different GPUs ({'; '.join(gpus)}): not one run.**"
        lines += gpu_section(args.gpu, machine, rows, note) + [""]
        sections.append((f"{gpu_name(machine)}: full self-k-NN graph, k = {machine['k']}", rows))
    if args.host:
        machine, rows = load(args.host)
        lines += host_section(args.host, machine, rows, note_of(args.host)) + [""]
        sections.append((f"{machine['cores']}-core host, {machine['threads']} threads each", rows))
    os.makedirs(args.out_dir, exist_ok=True)
    md, png = (os.path.join(args.out_dir, f"bench-knn.{e}") for e in ("md", "png"))
    with open(md, "w") as f:
        f.write("\n".join(lines))
    plot(sections, png)
    print(f"wrote {os.path.relpath(md)} and {os.path.relpath(png)}")


if __name__ == "__main__":
    main()
