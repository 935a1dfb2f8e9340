# Single entry point. `make train` and `make test` do all set-up on a fresh Debian 12 machine.
SHELL := /bin/bash
PY := /usr/bin/python3
BAZEL := bazel
# The disk cache is shared by every checkout on the machine. v2: session 4 saw C++ compile results
# cached from other worktrees (different headers) served to main (Bazel 4 'undeclared inclusion'),
# so main and CI start from a cache that only main's builds have written.
BAZEL_CACHE := $(HOME)/.cache/oneflow_like/bazel-disk-v2
CUDA_CONFIG := $(shell test -x /usr/local/cuda/bin/nvcc && echo --config=cuda)
BFLAGS := --disk_cache=$(BAZEL_CACHE) $(CUDA_CONFIG) $(EXTRA_BAZEL_FLAGS)
DEBS := bazel-bootstrap libabsl-dev pybind11-dev python3-dev python3-numpy python3-pytest \
        libdnnl-dev libopenblas-dev libfftw3-dev python3-sklearn python3-matplotlib libgtest-dev libgmock-dev libbenchmark-dev g++ \
        clang-format black python3-tqdm python3-pip flatbuffers-compiler libflatbuffers-dev \
        clang-14 libfuzzer-14-dev cmake pkg-config python3-hypothesis graphviz \
        python3-torch python3-scipy pocl-opencl-icd ocl-icd-opencl-dev opencl-c-headers libgloo-dev python3-onnx python3-absl
# From PyPI (not in Debian), installed for /usr/bin/python3 when missing.
PIPS := safetensors==0.8.0
# From PyPI without their dependencies: onnxruntime's pin protobuf>=4.25 would replace the
# protobuf Debian's python3-onnx was built with (onnxruntime itself only needs numpy at run time).
# tensorboard (utils.tensorboard): 2.20.0 is the newest whose protos load with Debian's protobuf
# 4.21 (2.21's need protobuf >= 5.26); it needs numpy, six and absl (python3-absl) at run time.
# ml_dtypes (the float8 reference of tests/python/test_dtypes_more.py) needs only numpy.
PIPS_NODEPS := onnxruntime==1.31.1 tensorboard==2.20.0 ml_dtypes==0.5.4
EXT := python/oneflow_like/_C.so
# The runtime both front ends link (_C.so and liboneflow_like.so find it beside them).
RUNTIME_SO := bazel-bin/oneflow_like/api/liboneflow_like_runtime.so

.PHONY: deps build test train bench clean format format-check install sanitize
PREFIX ?= /usr/local
deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; fi
	@for p in $(PIPS); do m=$${p%%==*}; $(PY) -c "import $$m" 2>/dev/null || { echo "installing $$p (PyPI)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO $(PY) -m pip install -q --break-system-packages --root-user-action=ignore $$p; }; done
	@for p in $(PIPS_NODEPS); do m=$${p%%==*}; $(PY) -c "import $$m" 2>/dev/null || { echo "installing $$p (PyPI, no deps)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO $(PY) -m pip install -q --no-deps --break-system-packages --root-user-action=ignore $$p; }; done

build: deps
	$(BAZEL) build $(BFLAGS) //...
	install -m 755 bazel-bin/python/csrc/_C.so $(RUNTIME_SO) python/oneflow_like/

test: deps
	@rm -rf bazel-testlogs/ 2>/dev/null; set +e; \
	$(BAZEL) test $(BFLAGS) //... ; rc=$$?; \
	$(PY) tools/count_tests.py bazel-testlogs; crc=$$?; \
	if [ $$rc -ne 0 ] && [ $$rc -ne 3 ]; then echo "bazel test exited $$rc"; exit $$rc; fi; exit $$crc

# The C++ API (include/oneflow_like): headers, liboneflow_like.so, pkg-config and CMake files.
install: deps
	$(BAZEL) build $(BFLAGS) //oneflow_like/api:liboneflow_like.so
	tools/cpp_api/install.sh $(PREFIX) bazel-bin/oneflow_like/api/liboneflow_like.so $(RUNTIME_SO)

train: build
	PYTHONPATH=python $(PY) examples/train_digits.py $(ARGS)

bench: build
	PYTHONPATH=python $(PY) benchmarks/run_all.py

# Sanitizers (a CI step before the tests; see docs/architecture.md "Sanitizers"); any report fails
# the run. tools/sanitize.sh instruments the runtime's own sources at -O0 (ASan+UBSan: vm,
# oneflow_like, compiler; TSan: vm and the framework core) in the opt build (kernels and libraries
# are shared with `make test` through the disk cache) and runs every C++ test of those layers, then
# a thread/memory slice of tests/python loaded with the sanitizer runtime. SAN_WIDE=1 adds the
# bindings and the distributed layer to ASan (by hand; CI leaves them out for time).
sanitize: deps
	tools/sanitize.sh asan $(BFLAGS)
	tools/sanitize.sh tsan $(BFLAGS)

format: deps
	tools/format.sh

format-check: deps
	tools/format.sh --check

clean:
	$(BAZEL) clean
