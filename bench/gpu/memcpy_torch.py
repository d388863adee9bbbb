#!/usr/bin/env python3
"""PyTorch's pinned-memory copies, timed the way strata's cuda.copy_bw
times them: one non-default stream, `warmup` untimed copies, then
`repeats` copies each bracketed by CUDA events; the median is reported.
Prints one JSON object per (dir, size) line.

usage: memcpy_torch.py DEVICE WARMUP REPEATS SIZE...
"""
import json
import statistics
import sys

import torch


def buffers(direction, n, dev):
    src_dev = torch.randint(0, 256, (n,), dtype=torch.uint8, device=dev)
    if direction == "h2d":
        src = torch.empty(n, dtype=torch.uint8).pin_memory()
        src.copy_(src_dev)
        dst = torch.empty(n, dtype=torch.uint8, device=dev)
    elif direction == "d2h":
        src = src_dev
        dst = torch.empty(n, dtype=torch.uint8).pin_memory()
    else:
        src = src_dev
        dst = torch.empty(n, dtype=torch.uint8, device=dev)
    return src, dst


def main():
    dev = torch.device("cuda:%d" % int(sys.argv[1]))
    warmup, repeats = int(sys.argv[2]), int(sys.argv[3])
    sizes = [int(s) for s in sys.argv[4:]]
    torch.cuda.set_device(dev)
    for direction in ("h2d", "d2h", "d2d"):
        for n in sizes:
            src, dst = buffers(direction, n, dev)
            stream = torch.cuda.Stream(device=dev)
            torch.cuda.synchronize()
            with torch.cuda.stream(stream):
                for _ in range(warmup):
                    dst.copy_(src, non_blocking=True)
                stream.synchronize()
                ev = [torch.cuda.Event(enable_timing=True)
                      for _ in range(repeats + 1)]
                ev[0].record(stream)
                for i in range(repeats):
                    dst.copy_(src, non_blocking=True)
                    ev[i + 1].record(stream)
                stream.synchronize()
            ms = sorted(ev[i].elapsed_time(ev[i + 1]) for i in range(repeats))
            ok = bool(torch.equal(dst.cpu() if dst.is_cuda else dst,
                                  src.cpu() if src.is_cuda else src))
            med = statistics.median(ms)
            print(json.dumps({"tool": "torch", "dir": direction, "size": n,
                              "median_ms": med, "min_ms": ms[0],
                              "gbps": n / (med * 1e6), "verified": ok}),
                  flush=True)
            del src, dst
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
