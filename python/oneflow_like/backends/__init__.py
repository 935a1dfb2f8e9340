"""flow.backends (torch.backends): per-backend switches scripts set. backends.cudnn and
backends.cuda hold PyTorch's flags; backends.mps, backends.mkldnn and backends.openmp say
which of those libraries this build uses."""
from oneflow_like.backends import cuda, cudnn, mkldnn, mps, openmp  # noqa: F401

__all__ = ["cuda", "cudnn", "mkldnn", "mps", "openmp"]
