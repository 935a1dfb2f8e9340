"""torch.autograd.profiler: the legacy profiler API (`profile(use_cuda=...)`, record_function),
over flow.profiler's recorder: the same events, key_averages() and chrome traces."""
from oneflow_like import profiler as _profiler
from oneflow_like.profiler import ProfilerActivity, record_function  # noqa: F401

__all__ = ["profile", "record_function"]


class profile(_profiler.profile):  # noqa: N801  (torch's name)
    """torch.autograd.profiler.profile(enabled=True, *, use_cuda=False, use_device=None,
    record_shapes=False, with_flops=False, profile_memory=False, with_stack=False,
    with_modules=False, use_kineto=False, use_cpu=True, ...). `enabled=False` records nothing."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False):  # fmt: skip
        activities = []
        if use_cpu:
            activities.append(ProfilerActivity.CPU)
        if use_cuda or use_device in ("cuda", "cuda:0"):
            activities.append(ProfilerActivity.CUDA)
        if not activities:
            activities = [ProfilerActivity.CPU]
        super().__init__(
            activities=activities,
            record_shapes=record_shapes,
            profile_memory=profile_memory,
            with_stack=with_stack,
            with_flops=with_flops,
            with_modules=with_modules,
        )
        self.enabled = bool(enabled)

    def __enter__(self):
        if self.enabled:
            super().__enter__()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            super().__exit__(*exc)
        return False

    @property
    def function_events(self):
        """Every recorded event (the legacy profiler's EventList)."""
        return self.events()

    def table(self, sort_by=None, row_limit=100, **kwargs):
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    @property
    def self_cpu_time_total(self):
        """Microseconds of CPU time spent in the ops themselves, summed."""
        return sum(e.self_cpu_time_total for e in self.key_averages())

    def __str__(self):
        return self.table()
