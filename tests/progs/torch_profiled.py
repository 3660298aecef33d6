#!/usr/bin/env python3
"""torch_profiled.py OUT: a small torch loop that profiles itself with
torch.profiler (CPU) and exports the profiler's Chrome trace to OUT.trace.json.

Its own truth goes to OUT.truth.json: pid, the native tid of the thread that
ran the loop, and for every step i the CLOCK_MONOTONIC ns read right after
entering record_function("known_block_i") and right before leaving it
(blocks: [[a, b], ...]). Each block sleeps 2 ms (the thread is off its CPU:
what gpuio sees and the merge aligns through), and 1 ms between blocks.
"""
import json
import os
import sys
import threading
import time

import torch
from torch.profiler import ProfilerActivity, profile, record_function
from torch.utils.data import DataLoader, TensorDataset


def main():
    out = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    loader = DataLoader(TensorDataset(torch.randn(16 * steps, 64)), batch_size=16)
    truth = {"pid": os.getpid(), "tid": threading.get_native_id(), "blocks": []}
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for i, (x,) in enumerate(loader):
            with record_function("known_block_%d" % i):
                a = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
                (x @ x.T).sum()
                time.sleep(0.002)
                b = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            truth["blocks"].append([a, b])
            time.sleep(0.001)
    prof.export_chrome_trace(out + ".trace.json")
    with open(out + ".truth.json", "w") as f:
        json.dump(truth, f)


if __name__ == "__main__":
    main()
