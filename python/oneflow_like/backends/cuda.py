"""flow.backends.cuda (torch.backends.cuda): `matmul.allow_tf32` switches TF32 in cuBLAS
matrix products and cuDNN convolutions (flow.cuda.set_allow_tf32: one switch for both, also
reached as backends.cudnn.allow_tf32); off by default."""
import oneflow_like as flow


class _MatmulFlags:
    _allow_tf32 = False

    @property
    def allow_tf32(self):
        return _MatmulFlags._allow_tf32

    @allow_tf32.setter
    def allow_tf32(self, value):
        flow.cuda.set_allow_tf32(bool(value))
        _MatmulFlags._allow_tf32 = bool(value)


matmul = _MatmulFlags()
