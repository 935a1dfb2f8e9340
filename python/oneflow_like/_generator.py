"""flow.Generator: a seeded host random-number generator for the APIs that take `generator=`
(nn.init, utils.data's DataLoader and random_split). Draws come from NumPy's PCG64 seeded
with the generator's seed, so `Generator().manual_seed(42)` reproduces a shuffle or an init on
every run and machine. Ops that draw on the device (flow.randn, dropout) use flow.manual_seed."""
import json
import os

import numpy as np

from oneflow_like import _C


class Generator:
    def __init__(self, device="cpu"):
        self.device = _C.device(device) if isinstance(device, str) else device
        self.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        self._initial = self._seed

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < 0:
            seed += 1 << 64  # PyTorch accepts negative seeds as their two's complement
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        return self

    def seed(self):
        """Re-seeds from the OS's entropy; returns the new seed."""
        self.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        return self._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The generator's state as a uint8 tensor (set_state takes it back)."""
        raw = json.dumps({"seed": self._seed, "rng": self._rng.bit_generator.state}).encode()
        return _C.from_numpy(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state):
        if not isinstance(new_state, _C.Tensor) or new_state.dtype != _C.dtype.uint8:
            raise TypeError(
                f"[Generator.set_state] expects the uint8 tensor of get_state(), got "
                f"{type(new_state).__name__}"
            )
        state = json.loads(new_state.numpy().tobytes().decode())
        self._seed = state["seed"]
        self._rng = np.random.default_rng()
        self._rng.bit_generator.state = state["rng"]
        return self

    @property
    def numpy_rng(self):
        """The NumPy Generator the draws come from."""
        return self._rng


__all__ = ["Generator"]
