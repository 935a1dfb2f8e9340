"""nn.parallel: DataParallel on one device (data_parallel.py) and DistributedDataParallel across
processes (distributed.py, over oneflow_like.distributed); the pieces of data parallelism as
functions (comm.py, scatter_gather.py, replicate.py, parallel_apply.py)."""
from oneflow_like.nn.parallel.data_parallel import DataParallel, data_parallel
from oneflow_like.nn.parallel.distributed import DistributedDataParallel
from oneflow_like.nn.parallel.parallel_apply import parallel_apply
from oneflow_like.nn.parallel.replicate import replicate
from oneflow_like.nn.parallel.scatter_gather import gather, scatter

__all__ = [
    "DataParallel",
    "DistributedDataParallel",
    "data_parallel",
    "gather",
    "parallel_apply",
    "replicate",
    "scatter",
]
