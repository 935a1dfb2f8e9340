"""torch.nn.parallel.parallel_apply: call several modules (replicas) on their inputs in
parallel threads, one per module, with the caller's grad mode; the first failure is raised in
the caller, naming the replica and its device."""
import threading

import oneflow_like as flow

__all__ = ["parallel_apply"]


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    if len(modules) != len(inputs):
        raise ValueError(
            f"[parallel_apply] {len(modules)} modules but {len(inputs)} inputs: one input each"
        )
    kwargs_tup = kwargs_tup if kwargs_tup is not None else ({},) * len(modules)
    devices = devices if devices is not None else [None] * len(modules)
    if not (len(kwargs_tup) == len(devices) == len(modules)):
        raise ValueError("[parallel_apply] modules, kwargs_tup and devices differ in length")
    results = [None] * len(modules)
    grad_enabled = flow.is_grad_enabled()

    def work(i, module, input, kwargs):
        try:
            with flow.set_grad_enabled(grad_enabled):
                args = input if isinstance(input, (list, tuple)) else (input,)
                results[i] = ("ok", module(*args, **kwargs))
        except Exception as e:  # reported to the caller below
            results[i] = ("error", e)

    if len(modules) == 1:
        work(0, modules[0], inputs[0], kwargs_tup[0])
    else:
        threads = [
            threading.Thread(target=work, args=(i, m, x, kw))
            for i, (m, x, kw) in enumerate(zip(modules, inputs, kwargs_tup))
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    outputs = []
    for i, (kind, value) in enumerate(results):
        if kind == "error":
            where = f" on device {devices[i]}" if devices[i] is not None else ""
            raise type(value)(
                f"Caught {type(value).__name__} in replica {i}{where}: {value}"
            ) from value
        outputs.append(value)
    return outputs
