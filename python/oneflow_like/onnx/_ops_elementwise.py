"""ONNX mappings of our elementwise ops (opdefs/unary.def, binary.def, ternary.def)."""
import math

OPS = {}

_SIMPLE_UNARY = {
    "neg": "Neg", "abs": "Abs", "sign": "Sign", "floor": "Floor", "ceil": "Ceil",
    "round": "Round", "relu": "Relu", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin",
    "cos": "Cos", "tanh": "Tanh", "sigmoid": "Sigmoid", "erf": "Erf", "reciprocal": "Reciprocal",
    "tan": "Tan", "asin": "Asin", "acos": "Acos", "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh",
    "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh", "softsign": "Softsign",
    "contiguous": "Identity", "to_device": "Identity",
}  # fmt: skip
_SIMPLE_BINARY = {
    "mul": "Mul", "div": "Div", "pow": "Pow", "maximum": "Max", "minimum": "Min", "eq": "Equal",
    "lt": "Less", "le": "LessOrEqual", "gt": "Greater", "ge": "GreaterOrEqual",
    "logical_and": "And", "logical_or": "Or", "logical_xor": "Xor",
}  # fmt: skip
_SCALAR_CMP = {
    "eq_scalar": "Equal", "lt_scalar": "Less", "le_scalar": "LessOrEqual",
    "gt_scalar": "Greater", "ge_scalar": "GreaterOrEqual",
}  # fmt: skip


def _simple(op_type, n_in):
    def fn(c):
        c.b.node(op_type, c.ins[:n_in], [c.outs[0]])

    return fn


for _k, _v in _SIMPLE_UNARY.items():
    OPS[_k] = _simple(_v, 1)
for _k, _v in _SIMPLE_BINARY.items():
    OPS[_k] = _simple(_v, 2)


def _scalar(c, value, i=0):
    return c.b.const_like(value, c.dtype(i))


def _scalar_cmp(op_type):
    def fn(c):
        c.b.node(op_type, [c.ins[0], _scalar(c, c.attrs["scalar"])], [c.outs[0]])

    return fn


for _k, _v in _SCALAR_CMP.items():
    OPS[_k] = _scalar_cmp(_v)


def _unary_formula(f):
    """A unary op written as a small ONNX expression f(c, x) -> name, stored into the output."""

    def fn(c):
        c.b.node("Identity", [f(c, c.ins[0])], [c.outs[0]])

    return fn


def _n(c, op_type, *ins, **attrs):
    return c.b.node(op_type, list(ins), **attrs)


def _gelu(c, x):
    if not c.attrs.get("approximate"):
        if c.b.opset >= 20:
            return _n(c, "Gelu", x)
        e = _n(c, "Erf", _n(c, "Mul", x, _scalar(c, 1 / math.sqrt(2))))
        return _n(c, "Mul", _n(c, "Mul", x, _scalar(c, 0.5)), _n(c, "Add", e, _scalar(c, 1)))
    inner = _n(c, "Add", x, _n(c, "Mul", _n(c, "Pow", x, _scalar(c, 3)), _scalar(c, 0.044715)))
    t = _n(c, "Tanh", _n(c, "Mul", inner, _scalar(c, math.sqrt(2 / math.pi))))
    return _n(c, "Mul", _n(c, "Mul", x, _scalar(c, 0.5)), _n(c, "Add", t, _scalar(c, 1)))


def _softplus(c, x):
    beta, thr = c.attrs.get("beta", 1.0), c.attrs.get("threshold", 20.0)
    bx = _n(c, "Mul", x, _scalar(c, beta))
    soft = _n(c, "Div", _n(c, "Softplus", bx), _scalar(c, beta))
    return _n(c, "Where", _n(c, "Greater", bx, _scalar(c, thr)), x, soft)


def _clamp(c, x):
    lo, hi = c.attrs.get("min", -math.inf), c.attrs.get("max", math.inf)
    ins = [x, _scalar(c, lo) if lo != -math.inf else "", _scalar(c, hi) if hi != math.inf else ""]
    while ins[-1] == "":
        ins.pop()
    return _n(c, "Clip", *ins)


def _logit(c, x):
    eps = c.attrs.get("eps", -1.0)
    if eps >= 0:
        x = _n(c, "Clip", x, _scalar(c, eps), _scalar(c, 1 - eps))
    return _n(c, "Log", _n(c, "Div", x, _n(c, "Sub", _scalar(c, 1), x)))


_FORMULAS = {
    "square": lambda c, x: _n(c, "Mul", x, x),
    "log1p": lambda c, x: _n(c, "Log", _n(c, "Add", x, _scalar(c, 1))),
    "rsqrt": lambda c, x: _n(c, "Reciprocal", _n(c, "Sqrt", x)),
    "silu": lambda c, x: _n(c, "Mul", x, _n(c, "Sigmoid", x)),
    "gelu": _gelu,
    "leaky_relu": lambda c, x: _n(c, "LeakyRelu", x, alpha=c.attrs.get("negative_slope", 0.01)),
    "elu": lambda c, x: _n(c, "Elu", x, alpha=c.attrs.get("alpha", 1.0)),
    "softplus": _softplus,
    "clamp": _clamp,
    "pow_scalar": lambda c, x: _n(c, "Pow", x, _scalar(c, c.attrs["exponent"])),
    "rpow_scalar": lambda c, x: _n(c, "Pow", _scalar(c, c.attrs["scalar"]), x),
    "expm1": lambda c, x: _n(c, "Sub", _n(c, "Exp", x), _scalar(c, 1)),
    "exp2": lambda c, x: _n(c, "Pow", _scalar(c, 2), x),
    "log2": lambda c, x: _n(c, "Div", _n(c, "Log", x), _scalar(c, math.log(2))),
    "log10": lambda c, x: _n(c, "Div", _n(c, "Log", x), _scalar(c, math.log(10))),
    "erfc": lambda c, x: _n(c, "Sub", _scalar(c, 1), _n(c, "Erf", x)),
    "mish": lambda c, x: _n(c, "Mul", x, _n(c, "Tanh", _n(c, "Softplus", x))),
    "hardsigmoid": lambda c, x: _n(c, "HardSigmoid", x, alpha=1 / 6, beta=0.5),
    "hardswish": lambda c, x: _n(c, "HardSwish", x),
    "tanhshrink": lambda c, x: _n(c, "Sub", x, _n(c, "Tanh", x)),
    "hardshrink": lambda c, x: _n(c, "Shrink", x, lambd=c.attrs.get("lambd", 0.5)),
    "softshrink": lambda c, x: _n(
        c, "Shrink", x, lambd=c.attrs.get("lambd", 0.5), bias=c.attrs.get("lambd", 0.5)
    ),
    "logit": _logit,
    "add_scalar": lambda c, x: _n(c, "Add", x, _scalar(c, c.attrs["scalar"])),
    "mul_scalar": lambda c, x: _n(c, "Mul", x, _scalar(c, c.attrs["scalar"])),
    "rsub_scalar": lambda c, x: _n(c, "Sub", _scalar(c, c.attrs["scalar"]), x),
    "rdiv_scalar": lambda c, x: _n(c, "Div", _scalar(c, c.attrs["scalar"]), x),
    "ne_scalar": lambda c, x: _n(c, "Not", _n(c, "Equal", x, _scalar(c, c.attrs["scalar"]))),
    "cast": lambda c, x: _n(c, "Cast", x, to=_onnx_type(c.out_dtype(0))),
}
for _k, _f in _FORMULAS.items():
    OPS[_k] = _unary_formula(_f)


def _onnx_type(dtype):
    from ._builder import DTYPES

    return DTYPES[dtype]


def _add_sub(op_type):
    def fn(c):
        y, alpha = c.ins[1], c.attrs.get("alpha", 1.0)
        if alpha != 1:
            y = _n(c, "Mul", y, _scalar(c, alpha, 1))
        c.b.node(op_type, [c.ins[0], y], [c.outs[0]])

    return fn


OPS["add"] = _add_sub("Add")
OPS["sub"] = _add_sub("Sub")
OPS["ne"] = lambda c: c.b.node("Not", [_n(c, "Equal", c.ins[0], c.ins[1])], [c.outs[0]])
OPS["fmod"] = lambda c: c.b.node(
    "Mod", c.ins[:2], [c.outs[0]], fmod=int(c.dtype(0).startswith(("float", "bfloat")))
)


def _floor_divide(c):
    if c.dtype(0).startswith(("float", "bfloat")):
        c.b.node("Floor", [_n(c, "Div", c.ins[0], c.ins[1])], [c.outs[0]])
    else:  # integer Div truncates; floor it for operands of opposite signs
        q = _n(c, "Div", c.ins[0], c.ins[1])
        r = _n(c, "Sub", c.ins[0], _n(c, "Mul", q, c.ins[1]))
        neg = _n(c, "And", _n(c, "Not", _n(c, "Equal", r, _scalar(c, 0))),
                 _n(c, "Xor", _n(c, "Less", c.ins[0], _scalar(c, 0)),
                    _n(c, "Less", c.ins[1], _scalar(c, 0, 1))))  # fmt: skip
        c.b.node("Sub", [q, _n(c, "Cast", neg, to=_onnx_type(c.dtype(0)))], [c.outs[0]])


def _remainder(c):
    if c.dtype(0).startswith(("float", "bfloat")):  # x - floor(x / y) * y, as PyTorch
        fl = _n(c, "Floor", _n(c, "Div", c.ins[0], c.ins[1]))
        c.b.node("Sub", [c.ins[0], _n(c, "Mul", fl, c.ins[1])], [c.outs[0]])
    else:
        c.b.node("Mod", c.ins[:2], [c.outs[0]], fmod=0)


OPS["floor_divide"] = _floor_divide
OPS["remainder"] = _remainder
OPS["where"] = _simple("Where", 3)


def _addc(op_type):  # x + value * (a op b)
    def fn(c):
        t = _n(c, op_type, c.ins[1], c.ins[2])
        t = _n(c, "Mul", t, _scalar(c, c.attrs.get("value", 1.0)))
        c.b.node("Add", [c.ins[0], t], [c.outs[0]])

    return fn


OPS["addcmul"] = _addc("Mul")
OPS["addcdiv"] = _addc("Div")
OPS["lerp"] = lambda c: c.b.node(
    "Add", [c.ins[0], _n(c, "Mul", c.ins[2], _n(c, "Sub", c.ins[1], c.ins[0]))], [c.outs[0]]
)


def _clamp_tensor(c):
    x, k = c.ins[0], 1
    if c.attrs.get("has_min", True):
        x, k = _n(c, "Max", x, c.ins[k]), k + 1
    if c.attrs.get("has_max", True):
        x = _n(c, "Min", x, c.ins[k])
    c.b.node("Identity", [x], [c.outs[0]])


OPS["clamp_tensor"] = _clamp_tensor
OPS["masked_fill"] = lambda c: c.b.node(
    "Where", [c.ins[1], _scalar(c, c.attrs["value"]), c.ins[0]], [c.outs[0]]
)
