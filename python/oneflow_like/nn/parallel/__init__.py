"""nn.parallel: DataParallel on one device (data_parallel.py) and DistributedDataParallel across
processes (distributed.py, over oneflow_like.distributed)."""
from oneflow_like.nn.parallel.data_parallel import DataParallel, data_parallel
from oneflow_like.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
