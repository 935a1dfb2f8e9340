"""Constraints (torch.distributions.constraints): what values a parameter or a sample may take.
`constraint.check(value)` returns a boolean tensor over the batch (the event dims reduced)."""
import oneflow_like as flow

__all__ = [
    "Constraint",
    "boolean",
    "cat",
    "corr_cholesky",
    "dependent",
    "dependent_property",
    "greater_than",
    "greater_than_eq",
    "independent",
    "integer_interval",
    "interval",
    "half_open_interval",
    "is_dependent",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "multinomial",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_semidefinite",
    "positive_definite",
    "positive_integer",
    "real",
    "real_vector",
    "simplex",
    "square",
    "stack",
    "symmetric",
    "unit_interval",
]


def _fmt(bound):
    """A bound as PyTorch prints it: a one-element tensor by its value."""
    if isinstance(bound, flow.Tensor) and bound.numel() == 1:
        return repr(bound.item())
    return repr(bound) if isinstance(bound, (int, float)) else str(bound)


class Constraint:
    """A region over which a variable is valid. is_discrete: whether the space is discrete;
    event_dim: how many rightmost dims together form one event (check reduces them)."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A boolean tensor: whether each event of `value` satisfies the constraint."""
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """Placeholder for a variable whose support depends on other variables (no check)."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is also a dependent constraint: `support` of a distribution whose support
    depends on its parameters (Uniform's interval(low, high))."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """Reinterprets the rightmost `reinterpreted_batch_ndims` batch dims of a constraint as
    event dims."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"independent: expected a Constraint, got {base_constraint!r}")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(
                f"independent: reinterpreted_batch_ndims must be an int >= 0, got "
                f"{reinterpreted_batch_ndims!r}"
            )
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        result = result.reshape(
            tuple(result.shape[: result.dim() - self.reinterpreted_batch_ndims]) + (-1,)
        )
        return result.all(-1)

    def __repr__(self):
        return (
            f"{self.__class__.__name__[1:]}({self.base_constraint!r}, "
            f"{self.reinterpreted_batch_ndims})"
        )


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = ((value == 0) | (value == 1)).all(-1)
        is_normalized = value.sum(-1).eq(1)
        return is_boolean & is_normalized


class _TwoSided(Constraint):
    """A constraint with a lower and an upper bound."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def __repr__(self):
        return (
            f"{self.__class__.__name__[1:]}(lower_bound={_fmt(self.lower_bound)}, "
            f"upper_bound={_fmt(self.upper_bound)})"
        )


class _IntegerInterval(_TwoSided):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)


class _OneSided(Constraint):
    """A constraint with one bound, stored under the name _bound_name."""

    _bound_name = "lower_bound"

    def __init__(self, *args, **kwargs):
        if len(args) + len(kwargs) != 1 or (kwargs and self._bound_name not in kwargs):
            raise TypeError(f"{type(self).__name__[1:]}: expected one argument, {self._bound_name}")
        setattr(self, self._bound_name, args[0] if args else kwargs[self._bound_name])
        super().__init__()

    def __repr__(self):
        bound = _fmt(getattr(self, self._bound_name))
        return f"{self.__class__.__name__[1:]}({self._bound_name}={bound})"


class _IntegerLessThan(_OneSided):
    is_discrete = True
    _bound_name = "upper_bound"

    def check(self, value):
        return (value % 1 == 0) & (value <= self.upper_bound)


class _IntegerGreaterThan(_OneSided):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Real(Constraint):
    def check(self, value):
        return value == value  # False for NaN only


class _GreaterThan(_OneSided):
    def check(self, value):
        return self.lower_bound < value


class _GreaterThanEq(_OneSided):
    def check(self, value):
        return self.lower_bound <= value


class _LessThan(_OneSided):
    _bound_name = "upper_bound"

    def check(self, value):
        return value < self.upper_bound


class _Interval(_TwoSided):
    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    """Non-negative vectors along the last dim that sum to 1 (within 1e-6)."""

    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Non-negative integer vectors summing to at most `upper_bound`."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        value_tril = value.tril()
        return (value_tril == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal."""

    event_dim = 2

    def check(self, value):
        value_tril = value.tril()
        lower_triangular = (value_tril == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)
        positive_diagonal = (flow.diagonal(value, dim1=-2, dim2=-1) > 0).all(-1)
        return lower_triangular & positive_diagonal


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: rows of unit Euclidean norm."""

    event_dim = 2

    def check(self, value):
        tol = flow.finfo(value.dtype).eps * value.shape[-1] * 10
        row_norm = flow.linalg.norm(value.detach(), dim=-1)
        unit_row_norm = ((row_norm - 1.0).abs() <= tol).all(-1)
        return _LowerCholesky().check(value) & unit_row_norm


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        n = value.shape[-2] == value.shape[-1]
        return flow.full(tuple(value.shape[:-2]), n, dtype=flow.bool, device=value.device)


class _Symmetric(_Square):
    def check(self, value):
        square_check = super().check(value)
        if not square_check.all():
            return square_check
        close = flow.isclose(value, value.mT, atol=1e-6)
        return close.reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        sym_check = super().check(value)
        if not sym_check.all():
            return sym_check
        return flow.linalg.eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        sym_check = super().check(value)
        if not sym_check.all():
            return sym_check
        return flow.linalg.eigvalsh(value).gt(0).all(-1)


class _Cat(Constraint):
    """Applies constraints `cseq` to the pieces of `dim` of sizes `lengths` (as flow.cat)."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        if lengths is None:
            lengths = [1] * len(self.cseq)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"cat: {len(self.cseq)} constraints but {len(self.lengths)} lengths")
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        checks = []
        start = 0
        for constr, length in zip(self.cseq, self.lengths):
            v = value.narrow(self.dim, start, length)
            checks.append(constr.check(v))
            start = start + length
        return flow.cat(checks, self.dim)


class _Stack(Constraint):
    """Applies constraints `cseq` to the slices of `dim` (as flow.stack)."""

    def __init__(self, cseq, dim=0):
        self.cseq = list(cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        if self.dim + dim < 0:
            dim += 1
        return dim

    def check(self, value):
        vs = [value.select(self.dim, i) for i in range(value.shape[self.dim])]
        return flow.stack([constr.check(v) for v, constr in zip(vs, self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
