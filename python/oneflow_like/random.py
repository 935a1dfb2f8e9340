"""torch.random: the CPU generator's seed and state, and fork_rng; plus the RNG functions of
torch.cuda, attached to flow.cuda below. States are uint8 tensors of 16 bytes (seed and offset,
see oneflow_like/_generator.py); restoring one replays every random op issued after it was
taken (rand, randn, randint, randperm, dropout, bernoulli, multinomial, normal_, uniform_...)."""
import contextlib
import warnings

from oneflow_like import _C
from oneflow_like._generator import (  # noqa: F401  (torch.random's names)
    Generator,
    _as_seed,
    _fresh_seed,
    _set_state,
    _state_tensor,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

# ---- torch.cuda's RNG functions ----------------------------------------------------------------


def _cuda_index(device, who):
    if device is None:
        return 0
    if isinstance(device, int):
        return device
    d = _C.device(device) if isinstance(device, str) else device
    if d.type != "cuda":
        raise ValueError(f"[cuda.{who}] expects a CUDA device, got {d}")
    return 0 if d.index < 0 else d.index


def _cuda_generator(device, who):
    """The default generator of a CUDA device; like torch, a RuntimeError when there is none."""
    if not _C.cuda.is_available():
        raise RuntimeError(f"[cuda.{who}] No CUDA GPUs are available")
    idx = _cuda_index(device, who)
    if not 0 <= idx < _C.cuda.device_count():
        raise RuntimeError(
            f"[cuda.{who}] invalid device index {idx} ({_C.cuda.device_count()} device(s))"
        )
    return _C._default_generator(f"cuda:{idx}")


def _cuda_get_rng_state(device="cuda"):
    """The state of a CUDA device's generator (a uint8 CPU tensor of 16 bytes)."""
    return _state_tensor(_cuda_generator(device, "get_rng_state"))


def _cuda_set_rng_state(new_state, device="cuda"):
    # Without a device PyTorch queues the call until CUDA starts (never, here): nothing to do.
    if not _C.cuda.is_available():
        return
    _set_state(_cuda_generator(device, "set_rng_state"), new_state, "cuda.set_rng_state")


def _cuda_get_rng_state_all():
    return [_cuda_get_rng_state(i) for i in range(_C.cuda.device_count())]


def _cuda_set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        _cuda_set_rng_state(state, i)


def _cuda_manual_seed(seed):
    """Seeds the current CUDA device's generator (device 0: there is no set_device); a no-op
    without a device, as in PyTorch."""
    seed = _as_seed(seed, "cuda.manual_seed")
    if _C.cuda.is_available():
        _C._default_generator("cuda:0").manual_seed(seed)


def _cuda_manual_seed_all(seed):
    seed = _as_seed(seed, "cuda.manual_seed_all")
    for i in range(_C.cuda.device_count()):
        _C._default_generator(f"cuda:{i}").manual_seed(seed)


def _cuda_seed():
    _cuda_manual_seed(_fresh_seed())


def _cuda_seed_all():
    _cuda_manual_seed_all(_fresh_seed())


def _cuda_initial_seed():
    return _cuda_generator(None, "initial_seed").initial_seed()


for _name, _fn in {
    "get_rng_state": _cuda_get_rng_state,
    "set_rng_state": _cuda_set_rng_state,
    "get_rng_state_all": _cuda_get_rng_state_all,
    "set_rng_state_all": _cuda_set_rng_state_all,
    "manual_seed": _cuda_manual_seed,
    "manual_seed_all": _cuda_manual_seed_all,
    "seed": _cuda_seed,
    "seed_all": _cuda_seed_all,
    "initial_seed": _cuda_initial_seed,
}.items():
    _fn.__name__ = _name
    setattr(_C.cuda, _name, _fn)

# ---- fork_rng ------------------------------------------------------------------------------------

_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(
    devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"
):
    """torch.random.fork_rng: on exit, restores the CPU generator's state and that of the CUDA
    devices in `devices` (default: every device, with a warning when there are several)."""
    global _fork_rng_warned_already
    if device_type != "cuda":
        raise RuntimeError(f"[fork_rng] device_type {device_type!r} is not supported; use 'cuda'")
    if not enabled:
        yield
        return
    if devices is None:
        num = _C.cuda.device_count() if _C.cuda.is_available() else 0
        if num > 1 and not _fork_rng_warned_already:
            warnings.warn(
                f"CUDA reports that you have {num} available devices, and you have used "
                f"{_caller} without explicitly specifying which devices are being used. For "
                f"safety, we initialize *every* CUDA device by default, which can be quite slow "
                f"if you have a lot of CUDAs. If you know that you are only making use of a few "
                f"CUDA devices, set the environment variable CUDA_VISIBLE_DEVICES or the "
                f"'{_devices_kw}' keyword argument of {_caller} with the set of devices you are "
                f"actually using."
            )
            _fork_rng_warned_already = True
        devices = list(range(num))
    else:
        devices = list(devices)
    cpu_state = get_rng_state()
    cuda_states = [_cuda_get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in zip(devices, cuda_states):
            _cuda_set_rng_state(state, d)


__all__ = [
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]
