"""Models, data and graphs shared by the artifact tests and tests/testdata/artifacts/make.py.
Small on purpose: the frozen files must stay a few tens of KB each."""
import os

import numpy as np

import oneflow_like as flow
import oneflow_like.nn as nn
import oneflow_like.nn.functional as F

DIGITS_CSV = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
HERE = os.path.dirname(os.path.abspath(__file__))


def digits(n=32, offset=0):
    """`n` digits images (standardised pixels, f32 [n, 64]) and labels (i64 [n]); a fixed
    synthetic stand-in when scikit-learn's copy is missing."""
    if os.path.exists(DIGITS_CSV):
        raw = np.loadtxt(DIGITS_CSV, delimiter=",", dtype=np.float64)[offset : offset + n]
        x, y = raw[:, :64] / 16.0, raw[:, 64].astype(np.int64)
    else:
        rng = np.random.default_rng(offset)
        x, y = rng.random((n, 64)), rng.integers(0, 10, n)
    x = ((x - 0.3) / 0.4).astype(np.float32)
    return x, y


def mlp():
    return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))


def cnn():
    """1x8x8 -> conv(4) -> BN -> ReLU -> conv(8) -> ReLU -> maxpool -> FC(16) -> FC(10): the
    digits CNN of examples/train_digits.py with 8x fewer channels."""
    conv = [nn.Unflatten(1, (1, 8, 8)), nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU()]
    conv += [nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten()]
    return nn.Sequential(*conv, nn.Linear(128, 16), nn.ReLU(), nn.Linear(16, 10))


class Encoder(nn.Module):
    """Digits as 8 tokens of 8 pixels -> TransformerEncoderLayer(8, 2) -> mean -> FC(10)."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            8, 2, dim_feedforward=16, dropout=0.0, batch_first=True
        )
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        return self.head(self.layer(x.reshape(-1, 8, 8)).mean(1))


MODELS = {"mlp": mlp, "cnn": cnn, "transformer": Encoder}


def build(name, seed=0):
    flow.manual_seed(seed)
    return MODELS[name]()


class Infer(nn.Graph):
    """An inference graph over `model` (the plugin tests and benchmarks/bench_plugin.py)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def build(self, x):
        return self.model(x)


class TrainGraph(nn.Graph):
    def __init__(self, model, opt):
        super().__init__()
        self.model = model
        self.add_optimizer(opt)

    def build(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        return loss


def train_graph(name, seed=0, adam=False):
    model = build(name, seed)
    if adam:
        opt = flow.optim.Adam(model.parameters(), lr=0.01)
    else:
        opt = flow.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return model, TrainGraph(model, opt)


def batches(k, n=32):
    return [tuple(map(flow.tensor, digits(n, offset=i * n))) for i in range(k)]
