"""All-reduce across every GPU of the pool, one torchrun per node (an Indexed Job pod).

torchrun sets RANK, LOCAL_RANK and WORLD_SIZE. Each message size is first checked for a correct
sum, then timed; the slowest rank's time counts. algbw and busbw follow nccl-tests
(doc/PERFORMANCE.md): algbw = bytes / time, busbw = algbw * 2 (n - 1) / n for all-reduce, so the
numbers compare with all_reduce_perf's. The run fails on a wrong sum, or when the bus bandwidth
at the largest size is below MIN_BUS_BANDWIDTH_GBS (0: report only). Across nodes that figure is
bounded by one node's network bandwidth (100 Gbit/s is 12.5 GB/s).

torch is imported in main() only, so the arithmetic below can be tested without it.
"""
import datetime
import os
import sys
import time


def sizes(min_bytes, max_bytes):
    """Message sizes from min_bytes doubling up to max_bytes, multiples of 4 (float32)."""
    out, size = [], max(4, min_bytes - min_bytes % 4)
    while size <= max_bytes:
        out.append(size)
        size *= 2
    return out


def bandwidths(nbytes, seconds, world):
    """(algbw, busbw) in GB/s for one all-reduce of nbytes over world ranks taking seconds."""
    algbw = nbytes / seconds / 1e9
    return algbw, algbw * 2 * (world - 1) / world


def verdict(busbw, minimum):
    """(passed, message) for the bus bandwidth at the largest size against the minimum."""
    if minimum <= 0:
        return True, "bus bandwidth %.2f GB/s (no minimum set: report only)" % busbw
    if busbw >= minimum:
        return True, "bus bandwidth %.2f GB/s, at least the minimum %.2f GB/s" % (busbw, minimum)
    return False, "bus bandwidth %.2f GB/s is below the minimum %.2f GB/s" % (busbw, minimum)


def main():
    import torch
    import torch.distributed as dist

    env = os.environ
    torch.cuda.set_device(int(env["LOCAL_RANK"]))
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=10))
    rank, world = dist.get_rank(), dist.get_world_size()
    warmup, iters = int(env.get("WARMUP_ITERS", "5")), int(env.get("ITERS", "20"))
    minimum = float(env.get("MIN_BUS_BANDWIDTH_GBS", "0"))
    say = print if rank == 0 else (lambda *a, **k: None)
    say("# all-reduce float32 sum: %d ranks (%s nodes x %s GPUs)" % (world, env.get("NODES", "?"), env.get("LOCAL_WORLD_SIZE", "?")))
    say("# %12s %12s %12s %12s" % ("size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)"))
    expected = world * (world + 1) / 2
    results, failed = [], False
    for nbytes in sizes(int(env.get("MIN_BYTES", "1048576")), int(env.get("MAX_BYTES", "1073741824"))):
        buf = torch.full((nbytes // 4,), float(rank + 1), dtype=torch.float32, device="cuda")
        dist.all_reduce(buf)
        wrong = torch.tensor([0.0 if bool(torch.all(buf == expected)) else 1.0], device="cuda")
        dist.all_reduce(wrong)
        if wrong.item() > 0:
            say("# size %d: %d ranks got a wrong sum (want %g)" % (nbytes, int(wrong.item()), expected))
            failed = True
            break
        buf.zero_()
        for _ in range(warmup):
            dist.all_reduce(buf)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(buf)
        torch.cuda.synchronize()
        elapsed = torch.tensor([(time.perf_counter() - start) / iters], dtype=torch.float64, device="cuda")
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        seconds = elapsed.item()
        algbw, busbw = bandwidths(nbytes, seconds, world)
        results.append(busbw)
        say("  %12d %12.1f %12.2f %12.2f" % (nbytes, seconds * 1e6, algbw, busbw))
        del buf
    if results and not failed:
        say("# Avg bus bandwidth    : %.2f" % (sum(results) / len(results)))
        ok, msg = verdict(results[-1], minimum)
        say("# " + msg)
        failed = not ok
    dist.destroy_process_group()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
