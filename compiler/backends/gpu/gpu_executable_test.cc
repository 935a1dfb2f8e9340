// Executes on a GPU: every test module against the reference evaluator, command buffers (CUDA
// graphs) against plain execution, replay and re-capture when buffer addresses change, and the
// copy/memset thunks. Every test reports SKIPPED when device/cuda finds no device.
#include <cuda_runtime_api.h>

#include <cmath>
#include <random>

#include "absl/strings/match.h"
#include "compiler/backends/gpu/gpu_compile.h"
#include "compiler/backends/gpu/gpu_test_modules.h"
#include "compiler/backends/gpu/gpu_thunks.h"
#include "compiler/eval/hlo_evaluator.h"
#include "compiler/ir/hlo_parser.h"
#include "gtest/gtest.h"
#include "device/cuda/cuda_status.h"
#include "device/cuda/device.h"

namespace oneflow_like::hlo {
namespace {

class GpuExecutableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda::DeviceCount() == 0) GTEST_SKIP() << "no CUDA device: " << cuda::NoDeviceReason();
  }
};

GpuCompileOptions Options(bool command_buffers) {
  GpuCompileOptions o;
  o.pipeline.dump = DumpOptions();
  o.emit.command_buffers = command_buffers;
  return o;
}

// Floats in [-1, 1); integers and pred in {0, 1, 2, 3} (rounded to the type).
std::vector<Literal> RandomArgs(const HloModule& m, uint64_t seed) {
  std::vector<Literal> args;
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> unit(-1, 1);
  std::uniform_int_distribution<int> small(0, 3);
  for (const HloInstruction* p : m.entry_computation()->parameters()) {
    Literal l(p->shape());
    for (double& v : l.data) v = IsFloating(p->shape().dtype()) ? unit(gen) : small(gen);
    l.RoundToType();
    args.push_back(std::move(l));
  }
  return args;
}

void Leaves(const Literal& l, std::vector<const Literal*>* out) {
  if (!l.shape.is_tuple()) return out->push_back(&l);
  for (const Literal& e : l.elements) Leaves(e, out);
}

// Relative tolerance per element (absolute below 1); NaN matches NaN.
void ExpectClose(const Literal& want, const Literal& got, double tol, const std::string& what) {
  std::vector<const Literal*> w, g;
  Leaves(want, &w);
  Leaves(got, &g);
  ASSERT_EQ(w.size(), g.size()) << what;
  for (size_t k = 0; k < w.size(); ++k) {
    ASSERT_EQ(w[k]->data.size(), g[k]->data.size()) << what << " output " << k;
    int reported = 0;
    for (size_t i = 0; i < w[k]->data.size(); ++i) {
      const double a = w[k]->data[i], b = g[k]->data[i];
      if (a == b || (std::isnan(a) && std::isnan(b))) continue;
      if (std::fabs(a - b) <= tol * std::max(1.0, std::fabs(a))) continue;
      ADD_FAILURE() << what << " output " << k << " element " << i << ": want " << a << " got "
                    << b;
      if (++reported == 5) break;
    }
  }
}

std::unique_ptr<GpuExecutable> Compile(const std::string& text, bool command_buffers) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return nullptr;
  auto exe = CompileForGpu(std::move(m).value(), Options(command_buffers));
  EXPECT_TRUE(exe.ok()) << exe.status();
  return exe.ok() ? std::move(exe).value() : nullptr;
}

TEST_F(GpuExecutableTest, EveryTestModuleMatchesTheEvaluatorWithAndWithoutCommandBuffers) {
  for (const auto& tm : gpu_test::Modules()) {
    auto parsed = ParseHloModule(tm.text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    const std::vector<Literal> args = RandomArgs(**parsed, 7);
    auto want = HloEvaluator().Evaluate(**parsed, args);
    ASSERT_TRUE(want.ok()) << tm.name << ": " << want.status();
    auto graphed = Compile(tm.text, true), plain = Compile(tm.text, false);
    ASSERT_TRUE(graphed && plain) << tm.name;
    for (int run = 0; run < 3; ++run) {  // run 0 captures, later runs replay
      auto a = graphed->RunOnHostLiterals(args);
      ASSERT_TRUE(a.ok()) << tm.name << ": " << a.status();
      ExpectClose(*want, *a, tm.tolerance,
                  absl::StrCat(tm.name, " (command buffers, run ", run, ")"));
    }
    auto b = plain->RunOnHostLiterals(args);
    ASSERT_TRUE(b.ok()) << tm.name << ": " << b.status();
    ExpectClose(*want, *b, tm.tolerance, absl::StrCat(tm.name, " (plain)"));
  }
}

// Device copies of host literals, laid out for the executable.
struct DeviceArgs {
  std::vector<void*> ptrs;
  ~DeviceArgs() {
    for (void* p : ptrs) cudaFree(p);
  }
  std::vector<const void*> in(size_t n) const { return {ptrs.begin(), ptrs.begin() + n}; }
  std::vector<void*> out(size_t n) const { return {ptrs.begin() + n, ptrs.end()}; }
};

void Upload(const GpuExecutable& exe, const std::vector<Literal>& args, DeviceArgs* d) {
  for (size_t i = 0; i < args.size(); ++i) {
    Literal l = args[i];
    l.shape = exe.parameter_shapes()[i];
    const std::vector<char> bytes = l.ToBytes();
    void* p = nullptr;
    ASSERT_EQ(cudaMalloc(&p, bytes.size()), cudaSuccess);
    d->ptrs.push_back(p);
    ASSERT_EQ(cudaMemcpy(p, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
  }
  for (const HloShape& s : exe.output_shapes()) {
    void* p = nullptr;
    ASSERT_EQ(cudaMalloc(&p, std::max<int64_t>(s.ByteSize(), 1)), cudaSuccess);
    d->ptrs.push_back(p);
  }
}

std::vector<Literal> Download(const GpuExecutable& exe, const DeviceArgs& d) {
  std::vector<Literal> out;
  const size_t n_in = exe.parameter_shapes().size();
  for (size_t k = 0; k < exe.output_shapes().size(); ++k) {
    const HloShape& s = exe.output_shapes()[k];
    std::vector<char> bytes(std::max<int64_t>(s.ByteSize(), 1));
    EXPECT_EQ(cudaMemcpy(bytes.data(), d.ptrs[n_in + k], s.ByteSize(), cudaMemcpyDeviceToHost),
              cudaSuccess);
    out.push_back(Literal::FromBytes(s, bytes.data()));
  }
  return out;
}

const CommandBufferThunk* OnlyCommandBuffer(const GpuExecutable& exe) {
  if (exe.thunks().size() != 1) return nullptr;
  return dynamic_cast<const CommandBufferThunk*>(exe.thunks()[0].get());
}

TEST_F(GpuExecutableTest, CommandBufferReplaysAndRecapturesWhenAddressesChange) {
  const std::string text = gpu_test::Find("mlp_step");
  auto exe = Compile(text, true);
  ASSERT_TRUE(exe);
  const CommandBufferThunk* cb = OnlyCommandBuffer(*exe);
  ASSERT_NE(cb, nullptr) << exe->ThunksToString();
  auto parsed = ParseHloModule(text);
  ASSERT_TRUE(parsed.ok());
  const std::vector<Literal> args_a = RandomArgs(**parsed, 1), args_b = RandomArgs(**parsed, 2);
  const double tol = 1e-4;
  auto want_a = HloEvaluator().Evaluate(**parsed, args_a),
       want_b = HloEvaluator().Evaluate(**parsed, args_b);
  ASSERT_TRUE(want_a.ok() && want_b.ok());
  DeviceArgs a, b;
  Upload(*exe, args_a, &a);
  Upload(*exe, args_b, &b);
  const size_t n = exe->parameter_shapes().size();
  auto run = [&](const DeviceArgs& d) {
    Status s = exe->Run(d.in(n), d.out(n));
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_EQ(cudaStreamSynchronize(exe->own_stream()), cudaSuccess);
    return Literal::MakeTuple(Download(*exe, d));
  };
  ExpectClose(*want_a, run(a), tol, "a, first run");
  EXPECT_EQ(cb->captures(), 1);
  ExpectClose(*want_a, run(a), tol, "a, replay");
  EXPECT_EQ(cb->captures(), 1);
  EXPECT_EQ(cb->replays(), 1);
  ExpectClose(*want_b, run(b), tol, "b, new addresses");
  EXPECT_EQ(cb->captures(), 2);
  ExpectClose(*want_b, run(b), tol, "b, replay");
  ExpectClose(*want_a, run(a), tol, "a again");
  EXPECT_EQ(cb->captures(), 3);
  EXPECT_EQ(cb->replays(), 2);
  // A run on another stream waits for the previous one and gives the same results.
  cudaStream_t other = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_TRUE(exe->Run(a.in(n), a.out(n), other).ok());
  ASSERT_EQ(cudaStreamSynchronize(other), cudaSuccess);
  ExpectClose(*want_a, Literal::MakeTuple(Download(*exe, a)), tol, "a on another stream");
  cudaStreamDestroy(other);
}

// With staging (what nn.Graph on CUDA compiles with), parameters and outputs the caller moves
// go through the executable's own buffers: the command buffer replays with new caller buffers.
TEST_F(GpuExecutableTest, StagedBuffersKeepReplayingWhenTheCallerMovesThem) {
  const std::string text = gpu_test::Find("mlp_step");
  auto parsed = ParseHloModule(text), to_compile = ParseHloModule(text);
  ASSERT_TRUE(parsed.ok() && to_compile.ok());
  GpuCompileOptions o = Options(true);
  o.stage_bytes = int64_t{1} << 20;
  auto compiled = CompileForGpu(std::move(to_compile).value(), o);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  GpuExecutable& exe = **compiled;
  const CommandBufferThunk* cb = OnlyCommandBuffer(exe);
  ASSERT_NE(cb, nullptr) << exe.ThunksToString();
  EXPECT_GT(exe.staged_bytes_per_run(), 0);
  const std::vector<Literal> args_a = RandomArgs(**parsed, 3), args_b = RandomArgs(**parsed, 4);
  auto want_a = HloEvaluator().Evaluate(**parsed, args_a),
       want_b = HloEvaluator().Evaluate(**parsed, args_b);
  ASSERT_TRUE(want_a.ok() && want_b.ok());
  DeviceArgs a, b;
  Upload(exe, args_a, &a);
  Upload(exe, args_b, &b);
  const size_t n = exe.parameter_shapes().size();
  auto run = [&](const DeviceArgs& d) {
    Status s = exe.Run(d.in(n), d.out(n));
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_EQ(cudaStreamSynchronize(exe.own_stream()), cudaSuccess);
    return Literal::MakeTuple(Download(exe, d));
  };
  ExpectClose(*want_a, run(a), 1e-4, "a");
  ExpectClose(*want_b, run(b), 1e-4, "b");
  ExpectClose(*want_a, run(a), 1e-4, "a again");
  EXPECT_EQ(cb->captures(), 1);
  EXPECT_EQ(cb->replays(), 2);
}

TEST_F(GpuExecutableTest, CopyAndMemsetThunksInACommandBuffer) {
  // One allocation of 64 bytes: memset [0,32) to 0x5a, copy it to [32,64), replay, then move.
  const BufferSlice lo{0, 0, 32}, hi{0, 32, 32};
  std::vector<std::unique_ptr<GpuThunk>> seq;
  seq.push_back(std::make_unique<GpuMemsetThunk>("fill", lo, 0x5a));
  seq.push_back(std::make_unique<GpuCopyThunk>("dup", lo, hi));
  CommandBufferThunk cb("cb", std::move(seq));
  ASSERT_TRUE(cb.Prepare({}).ok());
  ASSERT_TRUE(cb.Initialize({}).ok());
  void *x = nullptr, *y = nullptr;
  ASSERT_EQ(cudaMalloc(&x, 64), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&y, 64), cudaSuccess);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  for (void* base : {x, x, y}) {
    ASSERT_EQ(cudaMemset(base, 0, 64), cudaSuccess);
    BufferAllocations buffers({static_cast<char*>(base)});
    Thunk::ExecuteParams p;
    p.buffers = &buffers;
    p.stream = s;
    Status st = cb.ExecuteOnStream(p);
    ASSERT_TRUE(st.ok()) << st;
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    char host[64];
    ASSERT_EQ(cudaMemcpy(host, base, 64, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 64; ++i) ASSERT_EQ(host[i], 0x5a) << i;
  }
  EXPECT_EQ(cb.captures(), 2);
  EXPECT_EQ(cb.replays(), 1);
  cudaStreamDestroy(s);
  cudaFree(x);
  cudaFree(y);
}

// A library call between command buffers runs its handler on the runtime stream the executable
// was run on (DeviceExecutable::Run), in stream order with the captured kernels around it.
TEST_F(GpuExecutableTest, LibraryCallsRunTheirHandlerOnTheRuntimeStream) {
  static oneflow_like::Stream* seen = nullptr;
  static const bool registered = [] {
    DeviceExternalCall call;
    call.run = [](const std::string&, const std::string&, absl::Span<const ExternalBuffer> in,
                  absl::Span<const ExternalBuffer> out, oneflow_like::Stream* stream) -> Status {
      seen = stream;  // result = operand, enqueued on the run's stream
      const int64_t bytes = 64 * sizeof(float);
      CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out[0].data, in[0].data, bytes, cudaMemcpyDeviceToDevice,
                                           static_cast<cudaStream_t>(stream->native_handle())));
      return Status();
    };
    RegisterDeviceExternalCallPrefix(DeviceType::kCUDA, "test.gpu_exec_call.", std::move(call));
    return true;
  }();
  ASSERT_TRUE(registered);
  auto exe = Compile(R"(HloModule libcall_run
ENTRY %e {
  %x = f32[64] parameter(0)
  %one = f32[] constant(1)
  %b1 = f32[64] broadcast(%one), dimensions={}
  %a = f32[64] add(%x, %b1)
  %c = f32[64] custom-call(%a), custom_call_target="test.gpu_exec_call.copy"
  %two = f32[] constant(2)
  %b2 = f32[64] broadcast(%two), dimensions={}
  ROOT %m = f32[64] multiply(%c, %b2)
})",
                     true);
  ASSERT_TRUE(exe);
  auto stream = cuda::CudaStream::Create(0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  std::vector<float> host(64);
  for (int i = 0; i < 64; ++i) host[i] = 0.5f * i;
  void *x = nullptr, *y = nullptr;
  ASSERT_EQ(cudaMalloc(&x, 256), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&y, 256), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(x, host.data(), 256, cudaMemcpyHostToDevice), cudaSuccess);
  for (int run = 0; run < 2; ++run) {
    ASSERT_EQ(cudaMemset(y, 0, 256), cudaSuccess);
    const void* args[] = {x};
    void* outs[] = {y};
    Status st = exe->Run(args, outs, static_cast<oneflow_like::Stream*>(stream->get()));
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(seen, stream->get());
    ASSERT_TRUE((*stream)->Synchronize().ok());
    std::vector<float> got(64);
    ASSERT_EQ(cudaMemcpy(got.data(), y, 256, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 64; ++i) ASSERT_EQ(got[i], (0.5f * i + 1) * 2) << "run " << run << " " << i;
  }
  // Without a runtime stream the call cannot run its handler: an error, not a crash.
  const void* args[] = {x};
  void* outs[] = {y};
  Status bare = exe->Run(args, outs, exe->own_stream());
  EXPECT_FALSE(bare.ok());
  EXPECT_TRUE(absl::StrContains(bare.message(), "runtime stream")) << bare;
  cudaFree(x);
  cudaFree(y);
}

TEST_F(GpuExecutableTest, LargeLoopsAndWrongArgumentCounts) {
  // 2^22 elements: 16384 blocks; checks the grid covers the whole range.
  auto exe = Compile(R"(HloModule big
ENTRY %e {
  %x = f32[4194304] parameter(0)
  %i = s32[4194304] iota(), iota_dimension=0
  %c = f32[4194304] convert(%i)
  ROOT %y = f32[4194304] add(%x, %c)
})",
                     true);
  ASSERT_TRUE(exe);
  Literal x(exe->parameter_shapes()[0]);
  auto got = exe->RunOnHostLiterals({x});
  ASSERT_TRUE(got.ok()) << got.status();
  for (size_t i = 0; i < got->data.size(); i += 4099)
    ASSERT_EQ(got->data[i], static_cast<float>(i)) << i;
  EXPECT_EQ(got->data.back(), 4194303.0);
  Status bad = exe->Run({}, {});
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument) << bad;
}

}  // namespace
}  // namespace oneflow_like::hlo
