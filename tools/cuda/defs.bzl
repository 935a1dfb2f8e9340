"""cuda_library: .cu files compiled by nvcc into a static archive wrapped in a cc_library.

Each .cu file becomes one genrule running nvcc (sm_90 SASS for the H100/H200 this project runs on,
plus compute_80 PTX, which the driver JIT-compiles for A100s and for GPUs newer than sm_90; SASS
for sm_80 as well would cost ptxas ~60% more time per file, a minute of a 2-core CI run); the objects are archived into lib<name>_cu.a. The genrules are tagged
"manual" so `bazel build //...` never runs nvcc by itself: they are built only as dependencies
of the cc_library, which names the archive only under `--config=cuda` (//:with_cuda). In the
CPU-only configuration the cc_library has no sources at all.

Device code must not include abseil or other host-only headers: keep .cu files to kernels and
plain launch functions, and put Status handling and registration in .cc files.
"""

NVCC = "/usr/local/cuda/bin/nvcc"

CUDA_GENCODE = [
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_80,code=compute_80",
]

# The targets above as torch.cuda.get_arch_list() names them ("sm_90", "compute_80"), for
# device/cuda/BUILD's OFL_CUDA_ARCH_LIST define.
CUDA_ARCH_LIST = ",".join([g.split(",code=")[1] for g in CUDA_GENCODE])

NVCC_FLAGS = [
    "-std=c++17",
    "-O3",
    "--expt-relaxed-constexpr",
    "-diag-suppress=186",  # "pointless comparison of unsigned integer with zero" in generic code
    "-Xcompiler=-fPIC,-O2,-fno-omit-frame-pointer",
    "-I.",
    "-I/usr/local/cuda/include",
]

def cuda_library(name, srcs, hdrs = [], deps = [], nvcc_flags = [], visibility = None, **kwargs):
    """A cc_library made of nvcc-compiled objects; empty without --config=cuda.

    Args:
      name: the cc_library's name.
      srcs: .cu files.
      hdrs: headers the .cu files include (inputs of every nvcc action; not exported).
      deps: cc_library deps linked with the archive under --config=cuda.
      nvcc_flags: extra nvcc flags.
      visibility: of the cc_library.
      **kwargs: passed to the cc_library (e.g. alwayslink).
    """
    objs = []
    for src in srcs:
        if not src.endswith(".cu"):
            fail("cuda_library srcs must be .cu files, got " + src)
        stem = src[:-3]
        obj = "_%s_cu/%s.o" % (name, stem)
        native.genrule(
            name = "%s_nvcc_%s" % (name, stem.replace("/", "_")),
            srcs = [src] + hdrs,
            outs = [obj],
            cmd = " ".join([NVCC] + NVCC_FLAGS + CUDA_GENCODE + nvcc_flags +
                           ["-c", "$(location %s)" % src, "-o", "$@"]),
            tags = ["manual"],
            visibility = ["//visibility:private"],
        )
        objs.append(obj)
    archive = "lib%s_cu.a" % name
    native.genrule(
        name = name + "_archive",
        srcs = objs,
        outs = [archive],
        cmd = "rm -f $@ && ar rcs $@ $(SRCS)",
        tags = ["manual"],
        visibility = ["//visibility:private"],
    )
    native.cc_library(
        name = name,
        srcs = select({
            "//:with_cuda": [archive],
            "//conditions:default": [],
        }),
        deps = select({
            "//:with_cuda": deps + ["@cuda//:cudart"],
            "//conditions:default": [],
        }),
        visibility = visibility,
        **kwargs
    )
