"""torch.return_types: the named tuples that ops with several results return.

`flow.max(x, 1)` returns `return_types.max(values=..., indices=...)`, `flow.linalg.eigh` a
`return_types.linalg_eigh`, and so on, with torch's type names, field names and order, and torch's
repr. They are real `tuple` subclasses (collections.namedtuple), so they unpack, index, compare and
pickle (the types live at module level here, so pickle finds them by name), and utils._pytree
treats them as nodes. Each has an `_out` twin, as torch's, for results written to `out=`. The C++
bindings take their types from here (python/csrc: values_indices, ValuesIndices, BindLinalg).
"""
from collections import namedtuple

__all__ = []

# torch's names and field order (torch/return_types.pyi).
_FIELDS = {
    "aminmax": ("min", "max"),
    "cummax": ("values", "indices"),
    "cummin": ("values", "indices"),
    "frexp": ("mantissa", "exponent"),
    "geqrf": ("a", "tau"),
    "histogram": ("hist", "bin_edges"),
    "histogramdd": ("hist", "bin_edges"),
    "kthvalue": ("values", "indices"),
    "linalg_cholesky_ex": ("L", "info"),
    "linalg_eig": ("eigenvalues", "eigenvectors"),
    "linalg_eigh": ("eigenvalues", "eigenvectors"),
    "linalg_inv_ex": ("inverse", "info"),
    "linalg_ldl_factor": ("LD", "pivots"),
    "linalg_ldl_factor_ex": ("LD", "pivots", "info"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_lu": ("P", "L", "U"),
    "linalg_lu_factor": ("LU", "pivots"),
    "linalg_lu_factor_ex": ("LU", "pivots", "info"),
    "linalg_qr": ("Q", "R"),
    "linalg_slogdet": ("sign", "logabsdet"),
    "linalg_solve_ex": ("result", "info"),
    "linalg_svd": ("U", "S", "Vh"),
    "lu_unpack": ("P", "L", "U"),
    "max": ("values", "indices"),
    "median": ("values", "indices"),
    "min": ("values", "indices"),
    "mode": ("values", "indices"),
    "nanmedian": ("values", "indices"),
    "qr": ("Q", "R"),
    "slogdet": ("sign", "logabsdet"),
    "sort": ("values", "indices"),
    "svd": ("U", "S", "V"),
    "topk": ("values", "indices"),
    "triangular_solve": ("solution", "cloned_coefficient"),
}


def _repr(self):
    # torch's structseq layout: the qualified type name, then one field per line.
    body = ",\n".join(f"{k}={v!r}" for k, v in zip(self._fields, self))
    return f"torch.return_types.{type(self).__name__}(\n{body})"


def _make(name, fields):
    base = namedtuple(name, fields, module=__name__)
    cls = type(name, (base,), {"__slots__": (), "__repr__": _repr, "__module__": __name__})
    cls.n_fields = cls.n_sequence_fields = len(fields)
    cls.n_unnamed_fields = 0
    return cls


for _name, _f in _FIELDS.items():
    for _n in (_name, _name + "_out"):
        globals()[_n] = _make(_n, _f)
        __all__.append(_n)
del _name, _f, _n
