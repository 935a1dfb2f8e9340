"""torch.utils.data.dataloader: DataLoader and its helpers (defined in oneflow_like.utils.data)."""
from oneflow_like.utils.data import (  # noqa: F401
    DataLoader,
    default_collate,
    default_convert,
    get_worker_info,
    WorkerInfo,
)
from oneflow_like.utils.data.dataset import Dataset, IterableDataset  # noqa: F401
from oneflow_like.utils.data.sampler import (  # noqa: F401
    Sampler,
    SequentialSampler,
    RandomSampler,
    BatchSampler,
)
