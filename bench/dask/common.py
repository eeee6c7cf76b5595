"""What the Dask benchmarks and their table scripts share: the multi-GPU results' header, the task
stream's breakdown, the recorded command, the plots' frame, and writing a generated section of a
doc between its markers."""

import datetime
import os
import sys


def result_header(benchmark, params):
    """The JSON result's header: benchmark, date, machine (GPUs, cores), versions, params and the
    command line."""
    import dask
    import dask_cuda
    import distributed

    import spira

    return dict(benchmark=benchmark, date=datetime.date.today().isoformat(),
                machine=dict(gpus=spira._core.gpu_names(), cores=os.cpu_count()),
                versions=dict(spira=spira.__version__, dask=dask.__version__,
                              distributed=distributed.__version__, dask_cuda=dask_cuda.__version__),
                params=params, command=" ".join([f"bench/dask/{benchmark}.py"] + sys.argv[1:]),
                cases=[])


def breakdown(task_stream, wall, kind_of):
    """Seconds of compute by task kind (kind_of(task key name)), of transfers between workers, and
    the wall time."""
    compute, transfer = {}, 0.0
    for t in task_stream:
        name = t["key"][0] if isinstance(t["key"], tuple) else str(t["key"])
        kind = kind_of(name)
        for ss in t["startstops"]:
            dt = ss["stop"] - ss["start"]
            if ss["action"] == "compute":
                compute[kind] = compute.get(kind, 0.0) + dt
            elif ss["action"] == "transfer":
                transfer += dt
    return dict(compute_s=compute, transfer_s=transfer, wall_s=wall)


def command(line):
    """A recorded command without its --out (where the machine that ran it wrote); two commands
    joined by " ; " become "`a` and `b`"."""
    words = line.split()
    while "--out" in words:
        i = words.index("--out")
        del words[i:i + 2]
    return " ".join(words).replace(" ; ", "` and `")


def new_plot():
    """(plt, fig, ax) of a new figure for the GPU plots, or None without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no plot")
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    return plt, fig, ax


def finish_plot(ax, fig, gpu_counts, ylabel, title, path, legend_size=8, legend_cols=1):
    """The frame both GPU plots share (GPUs on x, log time on y), saved to path."""
    ax.set_xticks(gpu_counts, [str(x) for x in gpu_counts])
    ax.set_yscale("log")
    ax.set_xlabel("GPUs (one Dask worker each)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=legend_size, ncol=legend_cols)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def write_section(doc, begin, end, section):
    """Replaces what lies between the markers `begin` and `end` of `doc` (both kept: `section`
    starts with begin and ends with end)."""
    with open(doc) as f:
        text = f.read()
    if begin not in text:
        raise SystemExit(f"{doc} has no '{begin}' marker")
    text = text[:text.index(begin)] + section + text[text.index(end) + len(end):]
    with open(doc, "w") as f:
        f.write(text)
    print(f"wrote {doc}")
