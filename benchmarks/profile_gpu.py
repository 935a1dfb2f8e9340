"""Where oneflow_like's GPU time goes, seen through CUPTI (torch.profiler records every CUDA
kernel and runtime call of the process, ours included). A diagnostic for tools/gpu/run.sh, not a
benchmark: it prints, for a large elementwise add and for a TransformerEncoderLayer training step,
the device kernels and the CUDA runtime calls (launches, copies, syncs, mallocs) by total time.

    PYTHONPATH=python python3 benchmarks/profile_gpu.py
"""
import sys

import numpy as np

import oneflow_like as flow


def main():
    if not flow.cuda.is_available():
        print("profile_gpu: SKIPPED (no CUDA device)")
        return 0
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except ImportError:
        print("profile_gpu: SKIPPED (torch is not installed)")
        return 0
    torch.cuda.init()  # CUPTI needs torch's context up before our work is recorded

    N = 1 << 26
    x = flow.ones(N).to("cuda")
    y = flow.ones(N).to("cuda")
    for _ in range(2):
        flow.add(x, y)
    flow.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            flow.add(x, y)
        flow.cuda.synchronize()
    print("== 5 x flow.add(2^26 f32)")
    print(
        prof.key_averages().table(
            sort_by="self_cuda_time_total", row_limit=12, max_name_column_width=60
        )
    )
    del x, y

    nn = flow.nn
    rng = np.random.default_rng(0)
    flow.manual_seed(0)
    model = nn.TransformerEncoderLayer(256, 8, 1024, dropout=0.0, batch_first=True).to("cuda")
    opt = flow.optim.SGD(model.parameters(), lr=0.01)
    xin = flow.tensor(rng.standard_normal((32, 64, 256)).astype(np.float32)).to("cuda")
    tgt = flow.tensor(rng.standard_normal((32, 64, 256)).astype(np.float32)).to("cuda")
    loss_fn = nn.MSELoss()

    def step():
        opt.zero_grad()
        loss_fn(model(xin), tgt).backward()
        opt.step()

    for _ in range(3):
        step()
    flow.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            step()
        flow.cuda.synchronize()
    print("== 3 TransformerEncoderLayer training steps: device kernels")
    print(
        prof.key_averages().table(
            sort_by="self_cuda_time_total", row_limit=25, max_name_column_width=70
        )
    )
    print("== the same: CUDA runtime calls by host time")
    print(
        prof.key_averages().table(
            sort_by="self_cpu_time_total", row_limit=15, max_name_column_width=50
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
