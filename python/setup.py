"""Installs the already-built package (run `make build` first, which places _C.so and the runtime
library it links, liboneflow_like_runtime.so, here).

    /usr/bin/python3 -m pip install --no-build-isolation --no-deps --break-system-packages ./python
"""
import os

from setuptools import find_packages, setup

here = os.path.dirname(os.path.abspath(__file__))
for lib in ("_C.so", "liboneflow_like_runtime.so"):
    if not os.path.exists(os.path.join(here, "oneflow_like", lib)):
        raise SystemExit(
            "oneflow_like/%s is missing: run `make build` in the repository root first" % lib
        )

setup(
    name="oneflow_like",
    version="0.1.0",
    description="Eager deep-learning runtime with a virtual machine and an XLA-style graph compiler",
    packages=find_packages(include=["oneflow_like", "oneflow_like.*"]),
    package_data={"oneflow_like": ["_C.so", "liboneflow_like_runtime.so"]},
    python_requires=">=3.11",
    zip_safe=False,
)
