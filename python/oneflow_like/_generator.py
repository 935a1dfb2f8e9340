"""flow.Generator (torch.Generator) and flow.default_generator.

A generator is a seed and an offset, the number of per-op seeds it has handed out since it was
seeded (the C++ class oneflow_like::functional::Generator, bound as _C._Generator). Every random
op takes one per-op seed from its generator when it is issued, on the issuing thread, and its
kernel derives each element's numbers from that seed with a counter-based hash; so (seed, offset)
is the whole state, and get_state() taken at any point, even with earlier random ops still queued
on the VM, replays exactly the draws issued after it once set_state() restores it.

flow.default_generator is the CPU generator behind flow.manual_seed and every random op on the
CPU; each CUDA device has its own (flow.cuda.get_rng_state). A Generator made by the user serves
the ops it is passed to as generator= (flow.rand(3, generator=g)), and the host-side draws of
nn.init, random_split and the data samplers (through numpy_rng)."""
import os

import numpy as np

from oneflow_like import _C

# torch.Generator()'s seed before manual_seed / seed (default_rng_seed_val in PyTorch).
_DEFAULT_SEED = 67280421310721
_STATE_BYTES = 16  # seed and offset, little-endian uint64 each


def _as_seed(seed, who="manual_seed"):
    """PyTorch's seed rule: an int in [-2^63, 2^64); negative seeds are taken as their two's
    complement."""
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        raise RuntimeError(f"[{who}] manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if seed < -(1 << 63) or seed >= 1 << 64:
        raise RuntimeError(
            f"[{who}] Overflow when unpacking long: seed {seed} is outside [-2^63, 2^64)"
        )
    return seed + (1 << 64) if seed < 0 else seed


def _fresh_seed():
    """A non-deterministic seed (torch.seed(): 64 bits from the OS's entropy)."""
    return int.from_bytes(os.urandom(8), "little")


def _state_tensor(impl):
    seed, offset = impl.get_state()
    raw = np.array([seed, offset], dtype="<u8").view(np.uint8)
    return _C.from_numpy(raw.copy())


def _set_state(impl, new_state, who):
    if not isinstance(new_state, _C.Tensor):
        raise TypeError(f"[{who}] expected a torch.ByteTensor, but got {type(new_state).__name__}")
    if new_state.dtype != _C.dtype.uint8:
        raise TypeError(
            f"[{who}] RNG state must be a torch.ByteTensor (uint8), got {new_state.dtype}"
        )
    if new_state.numel() != _STATE_BYTES:
        raise RuntimeError(
            f"[{who}] expected an RNG state of {_STATE_BYTES} bytes (seed and offset, uint64 "
            f"each), but found the input RNG state size to be {new_state.numel()}"
        )
    seed, offset = np.ascontiguousarray(new_state.detach().to("cpu").numpy().reshape(-1)).view(
        "<u8"
    )
    impl.set_state(int(seed), int(offset))


class Generator:
    """torch.Generator(device='cpu')."""

    def __init__(self, device="cpu"):
        dev = _C.device(device) if isinstance(device, str) else device
        if not isinstance(dev, _C.device):
            raise TypeError(
                f"[Generator] expects a device or a string, got {type(device).__name__}"
            )
        self._impl = _C._Generator(dev, _DEFAULT_SEED)

    @classmethod
    def _wrap(cls, impl):
        g = cls.__new__(cls)
        g._impl = impl
        return g

    @property
    def device(self):
        return self._impl.device

    def manual_seed(self, seed):
        self._impl.manual_seed(_as_seed(seed))
        return self

    def seed(self):
        """Re-seeds from the OS's entropy; returns the new seed."""
        s = _fresh_seed()
        self._impl.manual_seed(s)
        return s

    def initial_seed(self):
        return self._impl.initial_seed()

    def get_state(self):
        """The state as a uint8 tensor of 16 bytes: the seed and the offset (little-endian)."""
        return _state_tensor(self._impl)

    def set_state(self, new_state):
        _set_state(self._impl, new_state, "Generator.set_state")
        return self

    @property
    def numpy_rng(self):
        """A NumPy generator seeded with this generator's next per-op seed (so it advances this
        generator by one draw): the source of host-side draws (nn.init, samplers)."""
        return np.random.default_rng(self._impl.next_seed())

    def __repr__(self):
        return f"<oneflow_like.Generator device={self.device} initial_seed={self.initial_seed()}>"


default_generator = Generator._wrap(_C._default_generator("cpu"))


def manual_seed(seed):
    """torch.manual_seed: seeds the CPU generator and every CUDA device's; returns
    flow.default_generator."""
    _C.manual_seed(_as_seed(int(seed)))  # int(): torch.manual_seed takes 1.5 as 1
    return default_generator


def seed():
    """torch.seed: seeds every default generator from the OS's entropy; returns the seed."""
    s = _fresh_seed()
    _C.manual_seed(s)
    return s


def initial_seed():
    """The CPU generator's seed (torch.initial_seed)."""
    return default_generator.initial_seed()


def get_rng_state():
    """The CPU generator's state as a uint8 tensor (torch.get_rng_state)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restores a state of get_rng_state (torch.set_rng_state)."""
    _set_state(default_generator._impl, new_state, "set_rng_state")


__all__ = ["Generator", "default_generator"]
