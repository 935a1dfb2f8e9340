"""What the __torch_function__ check costs a call on plain tensors (flow.overrides).

    PYTHONPATH=python /usr/bin/python3 benchmarks/bench_torch_function.py

The same callable is timed raw and inside the protocol's C++ wrapper (python/csrc/
torch_function_py.cc), interleaved, best of 9 rounds of 200000 calls, so machine load cancels
out better than in bench_frontend.py's per-op table: a C++ function (pybind11), a Python
function, and the Python function as a method. Then flow.add on 1-element tensors, wrapped and
raw, for scale, and the same add on a Tensor subclass (the protocol's slow path).
"""
import time

import oneflow_like as flow
from oneflow_like import _C

ROUNDS, CALLS = 9, 200000


def best_ns(cases, calls=CALLS):
    best = {k: float("inf") for k in cases}
    for _ in range(ROUNDS):
        for name, fn in cases.items():
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            flow.sync()
            best[name] = min(best[name], (time.perf_counter() - t) / calls * 1e9)
    return best


def main():
    a, b = flow.ones(1), flow.ones(1)

    def py_fn(x, y=None):
        return None

    class Holder:
        raw = py_fn
        wrapped = _C._tf_wrap(py_fn, True)

    h = Holder()
    cpp_raw = _C._tf_is_overloaded
    cpp_wrapped = _C._tf_wrap(cpp_raw, False)
    py_wrapped = Holder.wrapped
    add_raw = flow.add.__wrapped__

    class Sub(flow.Tensor):
        pass

    s = a.as_subclass(Sub)
    pairs = [
        ("C++ function f(t)", lambda: cpp_raw(a), lambda: cpp_wrapped(a)),
        ("Python function f(t, t)", lambda: py_fn(a, b), lambda: py_wrapped(a, b)),
        ("Python method t.f()", lambda: h.raw(a), lambda: h.wrapped(a)),
        ("flow.add(t, t), 1 element", lambda: add_raw(a, b), lambda: flow.add(a, b)),
    ]
    print(f"{'case':28s} {'raw ns':>9s} {'wrapped ns':>11s} {'cost ns':>8s}")
    for name, raw, wrapped in pairs:
        r = best_ns({"raw": raw, "wrapped": wrapped}, CALLS // 10 if "add" in name else CALLS)
        print(f"{name:28s} {r['raw']:9.1f} {r['wrapped']:11.1f} {r['wrapped'] - r['raw']:8.1f}")
    r = best_ns({"sub": lambda: flow.add(s, b)}, 2000)
    print(f"{'flow.add(Sub, t) (dispatch)':28s} {'':9s} {r['sub']:11.1f}")


if __name__ == "__main__":
    main()
