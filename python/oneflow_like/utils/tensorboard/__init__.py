"""oneflow_like.utils.tensorboard: torch.utils.tensorboard's SummaryWriter, writing TensorBoard
event files through the `tensorboard` package (`make deps` installs it)."""
try:
    import tensorboard  # noqa: F401
except ImportError as e:
    raise ImportError(
        "oneflow_like.utils.tensorboard needs the `tensorboard` package (make deps, or "
        "pip install --no-deps tensorboard==2.20.0 with python3-absl and protobuf)"
    ) from e

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "SummaryWriter"]
