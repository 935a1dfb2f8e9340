"""torch.utils.data.distributed: DistributedSampler (re-exported by oneflow_like.utils.data)."""
import numpy as np

from oneflow_like.utils.data import Sampler


class DistributedSampler(Sampler):
    """This rank's share of the dataset for data-parallel training: every rank gets the same
    number of indices (the list is padded by repeating its start, or with drop_last cut to a
    multiple of num_replicas), rank r taking positions r, r + num_replicas, ... With shuffle the
    order is a permutation seeded by seed + epoch, the same on every rank: call set_epoch(e)
    before each epoch for a fresh order. num_replicas / rank default to the process group's."""

    def __init__(
        self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False
    ):
        if num_replicas is None or rank is None:
            import oneflow_like.distributed as dist

            if not dist.is_initialized():
                raise RuntimeError(
                    "[DistributedSampler] pass num_replicas and rank, or initialize the default "
                    "process group first"
                )
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if num_replicas < 1 or not 0 <= rank < num_replicas:
            raise ValueError(
                f"[DistributedSampler] invalid rank {rank}: rank should be in the interval "
                f"[0, {num_replicas - 1}]"
            )
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last, self.epoch = shuffle, seed, drop_last, 0
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = n // num_replicas
        else:
            self.num_samples = -(-n // num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            indices = np.random.default_rng(self.seed + self.epoch).permutation(n).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[: self.total_size]
        elif n > 0:
            pad = self.total_size - n
            indices += (indices * (-(-pad // n)))[:pad]
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Seeds the next shuffle with seed + epoch (the same on every rank)."""
        self.epoch = epoch


__all__ = ["DistributedSampler"]
