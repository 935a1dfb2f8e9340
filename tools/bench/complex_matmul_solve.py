"""complex128 matmul and solve 256x256: median of 20 runs (ms); flow results include .numpy()
(the VM is asynchronous). --ref adds torch and NumPy. Before/after: run with PYTHONPATH at each
build."""
import sys, time
import numpy as np
import oneflow_like as flow


def med(f, reps=20):
    f()
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return 1e3 * sorted(ts)[len(ts) // 2]


rng = np.random.default_rng(0)
n = 256
a = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
b = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
A, B = flow.tensor(a), flow.tensor(b)
res = {"flow_matmul": med(lambda: (A @ B).numpy())}
try:
    res["flow_solve"] = med(lambda: flow.linalg.solve(A, B).numpy())
except Exception as e:
    res["flow_solve"] = f"n/a ({type(e).__name__})"
if "--ref" in sys.argv:
    import torch

    ta, tb = torch.tensor(a), torch.tensor(b)
    res["torch_matmul"] = med(lambda: ta @ tb)
    res["torch_solve"] = med(lambda: torch.linalg.solve(ta, tb))
    res["numpy_matmul"] = med(lambda: a @ b)
    res["numpy_solve"] = med(lambda: np.linalg.solve(a, b))
    res["torch_threads"] = torch.get_num_threads()
res["flow_threads"] = flow.get_num_threads() if hasattr(flow, "get_num_threads") else "?"
print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in res.items()})
