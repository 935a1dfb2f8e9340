"""flow.version (torch.version): the package version and the CUDA toolkit the build compiled
against ("13.0"; None for a build without the CUDA backend), as scripts print them."""
from oneflow_like import _C

from oneflow_like import __version__  # noqa: F401

debug = False
hip = None
git_version = "Unknown"


def _cuda_version():
    v = _C.cuda._build_info()["cuda_compiled"]
    return f"{v // 1000}.{v % 1000 // 10}" if v else None


cuda = _cuda_version()
