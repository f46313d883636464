"""Assembles the gate's report from what the script's Jobs printed (in $WORK), one JSON line.

dcgmi diag -j prints a JSON document whose tests carry results with a status; a test with a
"Fail" result is named in "failed". all_reduce_perf and the torchrun all-reduce print one line
per message size whose columns are size, ..., algbw, busbw (nccl-tests prints out-of-place
then in-place figures: the out-of-place ones are read); the largest size counts. HPCG writes
"GFLOP/s rating of" in its summary.
"""
import json
import os
import re
import sys

PREFIX = "gpucluster-acceptance-report: "


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def failed_tests(doc):
    """Names of the tests in a dcgmi diag JSON document with a failing result."""
    out = []

    def walk(x):
        if isinstance(x, dict):
            results = x.get("results")
            if isinstance(results, list) and any(isinstance(r, dict) and str(r.get("status", "")).lower() == "fail" for r in results):
                out.append(str(x.get("name", "?")))
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(doc)
    return out


def dcgm(text):
    m = re.search(r"^dcgm-exit: (\d+)$", text, re.M)
    result = {"level": 2, "exit_code": int(m.group(1)) if m else -1}
    if not m:
        result["detail"] = text.strip()[-400:] or "dcgmi printed nothing"
        return result
    body = text[m.end():].strip()
    try:
        failed = failed_tests(json.loads(body))
    except ValueError:
        failed, result["detail"] = [], body[-400:]
    if failed:
        result["failed"] = failed
    return result


def all_reduce(text, ranks, algbw_col, busbw_col):
    """The largest size's figures from an all-reduce's table, or why there are none."""
    best = None
    for line in text.splitlines():
        cols = line.split()
        if len(cols) > busbw_col and cols[0].isdigit():
            try:
                best = (int(cols[0]), float(cols[algbw_col]), float(cols[busbw_col]))
            except ValueError:
                continue
    if best is None:
        return {"ranks": ranks, "bytes": 0, "error": text.strip()[-400:] or "the job printed no figures"}
    return {"ranks": ranks, "bytes": best[0], "algbw_gbs": best[1], "busbw_gbs": best[2]}


def hpcg_rating(text):
    m = re.search(r"GFLOP/s rating of[^=]*=\s*([0-9.eE+-]+)", text)
    return float(m.group(1)) if m else 0.0


def main():
    env = os.environ
    work, gpus = env["WORK"], int(env["GPUS"])
    pairs = [p.split("=", 1) for p in env["NODES"].split()]
    report = {"pool": env["POOL"], "nodes": []}
    for iid, node in pairs:
        r = {"instance_id": iid, "node": node, "dcgm": dcgm(read(os.path.join(work, iid + ".dcgm")))}
        why = read(os.path.join(work, iid + ".why"))
        if why:
            r["error"] = why.strip()[-600:]
        if gpus > 1:
            # all_reduce_perf: size count type redop root time algbw busbw #wrong ...
            r["all_reduce"] = all_reduce(read(os.path.join(work, iid + ".nccl")), gpus, 6, 7)
        report["nodes"].append(r)
    n = len(pairs)
    if n > 1:
        # the torchrun validation: size time algbw busbw
        report["all_reduce"] = all_reduce(read(os.path.join(work, "pool.nccl")), n * gpus, 2, 3)
    if env.get("MPI") == "hpcg" and n > 1:
        base, full = hpcg_rating(read(os.path.join(work, "hpcg-1.log"))), hpcg_rating(read(os.path.join(work, "hpcg-%d.log" % n)))
        mpi = {"benchmark": "hpcg", "base_nodes": 1, "nodes": n}
        if base > 0 and full > 0:
            # The same global problem both times: the time per TFLOP of it is 1000 / rating.
            mpi.update(base_seconds=1000.0 / base, seconds=1000.0 / full, fp64_gflops=full)
        else:
            mpi["error"] = (read(os.path.join(work, "mpi.apply")) + read(os.path.join(work, "hpcg-%d.log" % n))).strip()[-600:] or "HPCG printed no rating"
        report["mpi"] = mpi
    sys.stdout.write(PREFIX + json.dumps(report, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
