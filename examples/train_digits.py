"""Train an MLP and a small CNN on the 8x8 handwritten digits (1797 images shipped inside Debian's
python3-sklearn), report held-out accuracy and write a loss-curve PNG under runs/.

    PYTHONPATH=python /usr/bin/python3 examples/train_digits.py [--model mlp|cnn|both]
        [--device auto|cpu|cuda] [--mode both|eager|graph] [--epochs N] [--nproc N]

--nproc N trains data-parallel on N processes (eager, CPU, Gloo): the script starts itself
through `python -m oneflow_like.distributed.run`; each rank wraps the model in
DistributedDataParallel and reads its shard of every epoch (DistributedSampler) with batch
64 / N, so the global batch and the schedule match the single-process run.

By default each model trains eagerly and then compiled (nn.Graph), on CUDA when a device is
present (--device auto). nn.Graph compiles for the CPU only in this build, so a compiled run asked
for on CUDA runs on the CPU and says so. The last line printed is `accuracy: X.XX` for the last
model trained.
"""
import argparse
import os
import sys
import time

import numpy as np
from tqdm import tqdm

import oneflow_like as flow
import oneflow_like.nn as nn
import oneflow_like.nn.functional as F
from oneflow_like.utils.data import DataLoader, DistributedSampler, TensorDataset

DIGITS_CSV = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"


def digits_csv():
    """The digits file of Debian's python3-sklearn, else of any importable scikit-learn (the GPU
    machine's venv has one from PyPI)."""
    if os.path.exists(DIGITS_CSV):
        return DIGITS_CSV
    import importlib.util

    spec = importlib.util.find_spec("sklearn")
    if spec and spec.submodule_search_locations:
        for root in spec.submodule_search_locations:
            path = os.path.join(root, "datasets", "data", "digits.csv.gz")
            if os.path.exists(path):
                return path
    sys.exit(f"digits data not found at {DIGITS_CSV}: install python3-sklearn (make deps)")


def load_digits(seed=0, test_fraction=0.2):
    """(x_train, y_train, x_test, y_test): pixels scaled to [0, 1] then standardised with the
    training split's per-pixel mean/std; a fixed-seed 80/20 split."""
    raw = np.loadtxt(digits_csv(), delimiter=",", dtype=np.float64)
    x, y = raw[:, :64] / 16.0, raw[:, 64].astype(np.int64)
    perm = np.random.default_rng(seed).permutation(len(x))
    n_test = int(round(len(x) * test_fraction))
    test, train = perm[:n_test], perm[n_test:]
    mean, std = x[train].mean(0), x[train].std(0) + 0.1
    x = ((x - mean) / std).astype(np.float32)
    return x[train], y[train], x[test], y[test]


def make_mlp():
    return nn.Sequential(
        nn.Linear(64, 128),
        nn.ReLU(),
        nn.Dropout(0.1),
        nn.Linear(128, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )


class SmallCNN(nn.Module):
    """1x8x8 -> conv(32) -> BN -> ReLU -> conv(64) -> ReLU -> maxpool -> 64x4x4 -> FC(128) -> FC(10)."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.Conv2d(32, 64, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Dropout(0.2), nn.Linear(64 * 4 * 4, 128), nn.ReLU(), nn.Linear(128, 10)
        )

    def forward(self, x):
        return self.classifier(self.features(x.reshape(-1, 1, 8, 8)))


def evaluate(model, x, y, device):
    model.eval()
    with flow.no_grad():
        logits = model(flow.from_numpy(x).to(device))
        pred = logits.argmax(1).cpu().numpy()
    model.train()
    return float((pred == y).mean())


def make_step(model, opt, mode):
    """One training step as a callable (x, y) -> loss tensor. mode 'graph' compiles it with
    flow.nn.Graph when that exists (lazy mode); otherwise the eager loop runs."""

    def eager_step(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    if mode == "graph":
        graph_cls = getattr(nn, "Graph", None)
        if graph_cls is None:
            print(
                "--mode graph: flow.nn.Graph is not available in this build; running eager",
                file=sys.stderr,
            )
            return eager_step

        class TrainGraph(graph_cls):
            def __init__(self):
                super().__init__()
                self.model = model
                self.add_optimizer(opt)

            def build(self, x, y):
                loss = F.cross_entropy(self.model(x), y)
                loss.backward()
                return loss

        return TrainGraph()
    return eager_step


def train(name, model, data, args, mode, device):
    x_train, y_train, x_test, y_test = data
    model = model.to(device)
    epochs = args.epochs if args.epochs is not None else {"mlp": 30, "cnn": 12}[name]
    dataset = TensorDataset(
        flow.from_numpy(x_train).to(device), flow.from_numpy(y_train).to(device)
    )
    sampler = None
    if flow.distributed.is_initialized():
        world = flow.distributed.get_world_size()
        model = nn.parallel.DistributedDataParallel(model)
        sampler = DistributedSampler(dataset, shuffle=True, seed=args.seed, drop_last=True)
    opt = flow.optim.Adam(model.parameters(), lr=2e-3, weight_decay=1e-4)
    loader = DataLoader(
        dataset,
        batch_size=64 if sampler is None else 64 // world,
        shuffle=sampler is None,
        sampler=sampler,
        drop_last=True,
        generator=args.seed if sampler is None else None,
    )
    sched = flow.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=5e-3, epochs=epochs, steps_per_epoch=len(loader)
    )
    step = make_step(model, opt, mode)
    losses = []
    t0 = time.time()
    # tqdm bars on stderr (off when stderr is not a terminal: disable=None); the loss shown is
    # the mean of the last finished epoch, read once per epoch so the host never waits inside it.
    epoch_bar = tqdm(range(epochs), desc=f"{name:>3} {mode:>5}", unit="epoch", disable=None)
    for epoch in epoch_bar:
        if sampler is not None:
            sampler.set_epoch(epoch)
        epoch_losses = []
        for x, y in tqdm(loader, desc="batches", unit="batch", leave=False, disable=None):
            epoch_losses.append(step(x, y))
            sched.step()
        values = [float(l.item()) for l in epoch_losses]
        losses.extend(values)
        epoch_bar.set_postfix(loss=f"{np.mean(values):.4f}")
    train_time = time.time() - t0
    entry = getattr(step, "_last_entry", None)
    if entry is not None:  # nn.Graph: where the compiled step ran
        c = entry.compiled
        why = f"; every op a kernel call: {c.device_fallback}" if c.device_fallback else ""
        print(f"{name} (graph): compiled for {c.device}{why}", flush=True)
    acc = evaluate(model, x_test, y_test, device)
    print(
        f"{name} ({mode}, {device}): {epochs} epochs in {train_time:.1f}s, final loss {np.mean(losses[-len(loader):]):.4f}, "
        f"test accuracy {acc:.4f}",
        flush=True,
    )
    return acc, losses


def plot(curves, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, losses in curves.items():
        ax.plot(np.arange(1, len(losses) + 1), losses, label=name, linewidth=1)
    ax.set_xlabel("step")
    ax.set_ylabel("training loss (cross-entropy)")
    ax.set_yscale("log")
    ax.set_title("digits: training loss")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=["mlp", "cnn", "both"], default="both")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--mode", choices=["both", "eager", "graph"], default="both")
    p.add_argument("--epochs", type=int, default=None, help="default: 30 (MLP), 12 (CNN)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs", help="folder for the loss-curve PNG")
    p.add_argument("--nproc", type=int, default=1, help="data-parallel processes (eager, CPU)")
    args = p.parse_args(argv)
    if args.nproc > 1 and "RANK" not in os.environ:
        return launch(args.nproc, sys.argv[1:] if argv is None else argv)
    if "RANK" in os.environ:
        flow.distributed.init_process_group("gloo")
        args.device, args.mode = "cpu", "eager"
        if flow.distributed.get_rank() != 0:  # one report: rank 0's
            sys.stdout = open(os.devnull, "w")

    if args.device == "auto":
        args.device = "cuda" if flow.cuda.is_available() else "cpu"
    data = load_digits(args.seed)
    print(
        f"digits: {len(data[0])} train / {len(data[2])} test images, device {args.device}, "
        f"mode {args.mode}",
        flush=True,
    )
    names = ["mlp", "cnn"] if args.model == "both" else [args.model]
    modes = ["eager", "graph"] if args.mode == "both" else [args.mode]
    curves, acc = {}, 0.0
    for name in names:
        for mode in modes:
            device = args.device
            flow.manual_seed(args.seed)  # same initial weights and batches in both modes
            model = make_mlp() if name == "mlp" else SmallCNN()
            acc, curves[f"{name} {mode}"] = train(name, model, data, args, mode, device)
    os.makedirs(args.out, exist_ok=True)
    png = os.path.join(args.out, f"digits_loss_{args.model}_{time.strftime('%Y%m%d-%H%M%S')}.png")
    plot(curves, png)
    print(f"loss curve: {png}", flush=True)
    print(f"accuracy: {acc:.2f}", flush=True)


def launch(nproc, argv):
    """Runs this script on `nproc` processes through the launcher; returns its exit code."""
    import subprocess

    cmd = [sys.executable, "-m", "oneflow_like.distributed.run", "--nproc-per-node", str(nproc)]
    cmd += ["--master-port", "0", os.path.abspath(__file__)] + list(argv)
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
