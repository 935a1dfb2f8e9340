"""Names torch puts in a torch.nn.modules submodule that ours defines elsewhere (importing them
there at load time would be circular): each such submodule ends with
`__getattr__ = late_names(__name__)`, so `from torch.nn.modules.linear import LazyLinear` works."""
import importlib

_LATE = {
    "activation": {"MultiheadAttention": "transformer"},
    "container": {"Container": "compat"},
    "conv": {f"Lazy{kind}{n}d": "lazy" for kind in ("Conv", "ConvTranspose") for n in (1, 2, 3)},
    "linear": {"Bilinear": "misc", "LazyLinear": "lazy"},
    "loss": {"NLLLoss2d": "compat"},
    "normalization": {"CrossMapLRN2d": "compat"},
    "pooling": {
        "AdaptiveAvgPool1d": "misc",
        "FractionalMaxPool2d": "compat",
        "FractionalMaxPool3d": "compat",
    },
}


def late_names(module_name):
    """The module-level __getattr__ (PEP 562) of one torch.nn.modules submodule."""
    table = _LATE[module_name.rpartition(".")[2]]

    def __getattr__(name):
        home = table.get(name)
        if home is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        return getattr(importlib.import_module("oneflow_like.nn.modules." + home), name)

    return __getattr__
