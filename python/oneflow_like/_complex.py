"""Complex tensors (complex64 / complex128), as torch: the dtypes, the views between complex and
real (view_as_real / view_as_complex, .real / .imag), construction (complex, polar, randn),
conjugation and the Tensor methods that take complex values. The arithmetic itself runs in the
runtime (oneflow_like/ops/complex.cc: compositions of real ops over view_as_real, so autograd
gives torch's conjugate-Wirtinger gradients); flow.fft is python/oneflow_like/fft."""

from . import _C
from ._C import Tensor

complex64 = _C.dtype.complex64
complex128 = _C.dtype.complex128
cfloat = complex64
cdouble = complex128


def view_as_real(input):
    """A real view [..., 2] of a complex tensor (same storage)."""
    return _C._view_as_real(input)


def view_as_complex(input):
    """A complex view of a float32/float64 tensor whose last dim has size 2 and stride 1."""
    return _C._view_as_complex(input)


def complex(real, imag):  # noqa: A001  (torch.complex)
    """real + i imag of two float32/float64 tensors of one dtype."""
    return _C._complex(real, imag)


def polar(abs, angle):  # noqa: A002
    """abs * (cos(angle) + i sin(angle))."""
    return _C._polar(abs, angle)


def real(input):
    """The real part: a view of a complex tensor; the tensor itself when it is real."""
    return _C._real(input)


def imag(input):
    """The imaginary part, a view; an error for real tensors (torch)."""
    return _C._imag(input)


def _set_real(self, value):
    self.real.copy_(
        value if isinstance(value, Tensor) else self.real.new_full(self.real.shape, value)
    )


def _set_imag(self, value):
    self.imag.copy_(
        value if isinstance(value, Tensor) else self.imag.new_full(self.imag.shape, value)
    )


def _conj_physical_(self):
    """Tensor.conj_physical_: conjugates in place (a copy of the conjugate, which autograd
    records as for real tensors); a no-op on real tensors."""
    if self.dtype.is_complex:
        self.copy_(_C._conj(self))
    return self


def _adjoint(input):
    """torch.adjoint / Tensor.mH: the conjugate transpose of the last two dims (the transpose of
    a real tensor)."""
    t = input.transpose(-2, -1)
    return _C._conj(t) if input.dtype.is_complex else t


def _H(self):
    """Tensor.H: the conjugate transpose of a matrix (0-D / 1-D tensors are returned as is)."""
    if self.dim() > 2:
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor."
        )
    return _adjoint(self) if self.dim() == 2 else self


def install(flow):
    """Adds the complex dtypes and functions to the flow namespace and the Tensor methods."""
    for name in ("complex64", "complex128", "cfloat", "cdouble", "view_as_real",
                 "view_as_complex", "complex", "polar", "real", "imag"):  # fmt: skip
        setattr(flow, name, globals()[name])
    Tensor.real = property(real, _set_real)
    Tensor.imag = property(imag, _set_imag)
    Tensor.conj_physical_ = _conj_physical_
    Tensor.mH = property(_adjoint)
    Tensor.H = property(_H)
    Tensor.adjoint = _adjoint
    flow.adjoint = _adjoint
