"""The CUB top-k peer of the selection benchmarks (select_k.py, select_vector.py): runs the harness
../shared/tools/peers/cub_topk_peer (built by cub-build.sh there), one process per case, and turns
its JSON lines into fields of spira's results. A missing harness, a failure or a timeout is
recorded as an error, never raised."""
import json
import os
import subprocess

CUB_TIMEOUT = 120  # seconds one cub_topk_peer process may run
# How spira is timed for the ratio to CUB: as the harness times CUB (the benchmarks' case flags),
# so that the ratio compares like with like; torch.topk is compared with the rotated int64 run.
LIKE_CUB = ("spira timed as the harness times CUB: one resident input that is not rotated, int32 "
            "indices (case flags `resident int32`)")
CUB_TIMING = ("one process per case; median of as many timed calls as spira's (CUDA events) after "
              "3 warm-up calls, on one resident input that is not rotated (an input that fits in L2 "
              "stays there); N(0,1) float32 keys from the harness's own hash")


def cub_lines(peer, args, timeout=CUB_TIMEOUT):
    """Runs the CUB harness once: (its JSON lines, None), or ([], why it printed none)."""
    try:
        proc = subprocess.run([peer] + [str(a) for a in args], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return [], "%s ran past %d s" % (" ".join(map(str, args)), timeout)
    except OSError as e:
        return [], str(e)
    lines = []
    for l in proc.stdout.splitlines():
        if l.startswith("{"):
            try:
                lines.append(json.loads(l))
            except ValueError:  # cut short by a crash
                pass
    if not lines:
        return [], "exit %d without a JSON line: %s" % (
            proc.returncode, (proc.stdout + proc.stderr).strip()[-300:])
    return lines, None


def cub_peer(path, errors):
    """(the harness to run or None, its `info` lines merged or None, why it is not run or None).
    A harness whose `info` fails still runs: its cases then record their own errors."""
    if not path:
        return None, None, "CUB peer not run (no --cub, $SPIRA_CUB_PEER unset)"
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        why = "CUB peer not run: %s is not an executable file" % path
        errors.append({"kind": "cub_error", "case": "info", "what": why})
        return None, None, why
    lines, why = cub_lines(path, ["info"])
    info = {"path": path}
    for line in lines:
        info.update(line)
    if why:
        info["error"] = why
        errors.append({"kind": "cub_error", "case": "info", "what": why})
    return path, info, None


def cub_case(peer, args, reps, errors):
    """One timed case of the CUB harness (`vector N K` or `batched ROWS LEN K`): (the fields its
    spira results carry, the harness's JSON line with its arguments). A failure is an error field
    (and an entry of errors), never an exception."""
    lines, why = cub_lines(peer, list(args) + ["--warmup", 3, "--iters", reps])
    out = lines[-1] if lines else {}
    why = why or out.get("error") or (None if "median_ms" in out else "no median_ms: %s" % out)
    case = " ".join(map(str, args))
    if why:
        errors.append({"kind": "cub_error", "case": case, "what": why})
    elif out.get("check") != "pass":
        errors.append({"kind": "cub_check", "case": case, "what": "the harness's check: %s"
                       % out.get("check")})
    fields = dict(cub_ms=None if why else out["median_ms"], cub_min_ms=out.get("min_ms"),
                  cub_check=out.get("check"), cub_temp_bytes=out.get("temp_bytes"), cub_error=why)
    return fields, dict(args=[str(a) for a in args], **out)
