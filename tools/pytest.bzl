"""py_pytest: one py_test per pytest file, with per-case results in Bazel's test.xml."""

def py_pytest(name, src, deps = [], data = [], size = "medium", **kwargs):
    native.py_test(
        name = name,
        srcs = ["//tools:pytest_main.py", src],
        main = "//tools:pytest_main.py",
        args = ["$(location %s)" % src],
        data = data + [src],
        deps = deps + ["//python:oneflow_like_py"],
        python_version = "PY3",
        legacy_create_init = False,
        size = size,
        **kwargs
    )
