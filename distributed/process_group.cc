#include "distributed/process_group.h"

#include <unistd.h>

#include <algorithm>
#include <thread>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_join.h"
#include "distributed/tcp_store.h"
#include "gloo/allgather.h"
#include "gloo/allreduce.h"
#include "gloo/alltoallv.h"
#include "gloo/barrier.h"
#include "gloo/broadcast.h"
#include "gloo/gather.h"
#include "gloo/reduce.h"
#include "gloo/scatter.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/prefix_store.h"
#include "gloo/transport/tcp/device.h"
#include "gloo/transport/unbound_buffer.h"
#include "vm/instructions_builder.h"

namespace oneflow_like {
namespace distributed {

namespace {
// Signature exchanged before each collective: op, dtype, op argument (root / reduce op), ndim,
// up to kMaxDims dims (later dims folded into the last slot).
enum OpCode : int64_t {
  kAllReduceOp = 1,
  kBroadcastOp,
  kAllGatherOp,
  kReduceScatterOp,
  kBarrierOp,
  kReduceOp,
  kGatherOp,
  kScatterOp,
  kAllToAllOp
};
constexpr int kMaxDims = 8;
constexpr int kSigLen = 4 + kMaxDims;
// Point-to-point slots live apart from the collectives' (Gloo's prefixes are 0x01-0x08).
constexpr uint64_t kP2PSlotPrefix = uint64_t{0xD1} << 56;
constexpr uint64_t kRingSlotPrefix = uint64_t{0xD2} << 56;  // reduce_scatter's ring

const char* OpCodeName(int64_t code) {
  static const char* names[] = {
      "?",       "all_reduce", "broadcast", "all_gather", "reduce_scatter",
      "barrier", "reduce",     "gather",    "scatter",    "all_to_all_single"};
  return code >= 1 && code <= 9 ? names[code] : "?";
}

std::string DescribeTensor(const Tensor& t) {
  return absl::StrCat(DTypeLongName(t.dtype()), "[", absl::StrJoin(t.shape().dims(), ", "), "]");
}

std::vector<int64_t> Signature(OpCode op, const Tensor* t, int64_t arg) {
  std::vector<int64_t> s(kSigLen, 0);
  s[0] = op;
  s[2] = arg;
  if (t != nullptr) {
    s[1] = static_cast<int64_t>(t->dtype());
    s[3] = t->ndim();
    for (int64_t i = 0; i < t->ndim(); ++i)
      s[4 + std::min<int64_t>(i, kMaxDims - 1)] =
          i < kMaxDims ? t->dim(i) : s[4 + kMaxDims - 1] * 1000003 + t->dim(i);
  }
  return s;
}

std::string DescribeSignature(const int64_t* s) {
  std::string out = OpCodeName(s[0]);
  if (s[0] == kBarrierOp) return out;
  std::vector<int64_t> dims(s + 4, s + 4 + std::min<int64_t>(s[3], kMaxDims));
  absl::StrAppend(&out, " of ", DTypeLongName(static_cast<DType>(s[1])), "[",
                  absl::StrJoin(dims, ", "), s[3] > kMaxDims ? ", ..." : "", "]");
  if (s[0] == kBroadcastOp || s[0] == kScatterOp) absl::StrAppend(&out, " from root ", s[2]);
  if (s[0] == kGatherOp) absl::StrAppend(&out, " to root ", s[2]);
  if (s[0] == kReduceOp)
    absl::StrAppend(&out, " to root ", s[2] / 8, " with ",
                    ReduceOpName(static_cast<ReduceOp>(s[2] % 8)));
  if (s[0] == kAllReduceOp || s[0] == kReduceScatterOp)
    absl::StrAppend(&out, " with ", ReduceOpName(static_cast<ReduceOp>(s[2])));
  return out;
}

// Gloo's typed setters only use the element size: pick an unsigned type of that size.
template <typename Opts>
void SetOutput(Opts& o, void* p, int64_t n, int64_t esize) {
  switch (esize) {
    case 1: o.template setOutput<uint8_t>(static_cast<uint8_t*>(p), n); break;
    case 2: o.template setOutput<uint16_t>(static_cast<uint16_t*>(p), n); break;
    case 4: o.template setOutput<uint32_t>(static_cast<uint32_t*>(p), n); break;
    default: o.template setOutput<uint64_t>(static_cast<uint64_t*>(p), n); break;
  }
}

// `list` must hold `n` tensors shaped like `like` ("output" / "input" names them in errors).
StatusOr<std::vector<TensorBytes>> BytesOfList(const char* op, const TensorList& list,
                                               const Tensor& like, int n, const char* role) {
  if (static_cast<int>(list.size()) != n)
    return InvalidArgument("[%s] needs world_size (%d) %s tensors: got %d", op, n, role,
                           int(list.size()));
  std::vector<TensorBytes> out;
  for (const Tensor& t : list) {
    if (t.dtype() != like.dtype() || !(t.shape() == like.shape()))
      return InvalidArgument("[%s] every %s must be shaped like %s: got %s", op, role,
                             DescribeTensor(like), DescribeTensor(t));
    ASSIGN_OR_RETURN(TensorBytes b, BytesOf(t, op));
    out.push_back(b);
  }
  return out;
}

// Gloo's all-reduce with the options every caller uses (the collectives, the graph's, the
// benchmark's raw baseline): the ring algorithm, in place on `data`.
void RunGlooAllReduce(const std::shared_ptr<gloo::Context>& ctx, void* data, int64_t n,
                      int64_t esize, const ReduceFn& fn, uint32_t tag,
                      std::chrono::milliseconds timeout) {
  gloo::AllreduceOptions o(ctx);
  SetOutput(o, data, n, esize);
  o.setReduceFunction(fn);
  o.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
  o.setTag(tag);
  o.setTimeout(timeout);
  gloo::allreduce(o);
}

// CallerWaits' flag: this thread waits for what it issues right away.
thread_local bool t_caller_waits = false;

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0;
}

Status CheckRank(const char* op, int r, int size, const char* what) {
  if (r < 0 || r >= size)
    return InvalidArgument("[%s] %s rank %d is out of range for world_size %d", op, what, r, size);
  return Status();
}
}  // namespace

ProcessGroupGloo::CallerWaits::CallerWaits() : outer_(t_caller_waits) {
  t_caller_waits = true;
}

ProcessGroupGloo::CallerWaits::~CallerWaits() {
  t_caller_waits = outer_;
}

ProcessGroupGloo::ProcessGroupGloo(ProcessGroupOptions options)
    : options_(std::move(options)), order_(std::make_shared<vm::Blob>(Device::CPU(), 0)) {}

ProcessGroupGloo::~ProcessGroupGloo() {
  StopGraphWorker();
}

StatusOr<std::shared_ptr<ProcessGroupGloo>> ProcessGroupGloo::Create(
    const ProcessGroupOptions& options) {
  if (options.world_size < 1)
    return InvalidArgument("[init_process_group] world_size must be >= 1: got %d",
                           options.world_size);
  RETURN_IF_ERROR(CheckRank("init_process_group", options.rank, options.world_size, "this"));
  std::shared_ptr<ProcessGroupGloo> pg(new ProcessGroupGloo(options));
  Status st = pg->Connect();
  if (!st.ok())
    return Status(st.code(), absl::StrFormat("[init_process_group] rank %d of %d: %s", options.rank,
                                             options.world_size, st.message()));
  Register(pg);
  return pg;
}

Status ProcessGroupGloo::Connect() {
  const int rank = options_.rank, size = options_.world_size;
  ASSIGN_OR_RETURN(store_,
                   TcpStore::Create(options_.host, options_.port, rank == 0, options_.timeout));
  // Agree on the world size and catch a rank started twice before Gloo's rendezvous, whose
  // own failure would only be a timeout.
  ASSIGN_OR_RETURN(int64_t joined, store_->Add(absl::StrCat("ofl/joined/", rank), 1));
  if (joined > 1) return InvalidArgument("two processes were started as rank %d", rank);
  const std::string mine = std::to_string(size);
  RETURN_IF_ERROR(store_->Set(absl::StrCat("ofl/world_size/", rank), {mine.begin(), mine.end()}));
  auto check = [&](int other) -> Status {
    auto got = store_->Get(absl::StrCat("ofl/world_size/", other));
    if (!got.ok())
      return Status(
          got.status().code(),
          absl::StrFormat("rank %d did not join within the timeout (%d ms; is it "
                          "running, with the same MASTER_ADDR:MASTER_PORT?): %s",
                          other, int64_t(options_.timeout.count()), got.status().message()));
    const std::vector<char>& v = *got;
    // Rank 0 serves the store: on a mismatch it waits until the other rank has read rank 0's
    // value, so both report the mismatch (rather than the other seeing the store vanish).
    // (Its reply may be lost when rank 0 stops the store right after a mismatch: ignored.)
    if (rank != 0) (void)store_->Set(absl::StrCat("ofl/seen/", rank), {'1'});
    std::string theirs(v.begin(), v.end());
    if (theirs == mine) return Status();
    if (rank == 0) (void)store_->Get(absl::StrCat("ofl/seen/", other));
    return InvalidArgument(
        "world_size mismatch: this rank has world_size=%d but rank %d has "
        "world_size=%s (every rank must be started with the same value)",
        size, other, theirs);
  };
  if (rank != 0) RETURN_IF_ERROR(check(0));
  for (int r = 1; rank == 0 && r < size; ++r) RETURN_IF_ERROR(check(r));

  RETURN_IF_ERROR(ConnectMesh(""));
  // Nobody leaves before everyone is connected: rank 0's store must outlive the others' reads.
  ASSIGN_OR_RETURN(int64_t ready, store_->Add("ofl/ready", 1));
  if (ready == size) RETURN_IF_ERROR(store_->Set("ofl/all_ready", {'1'}));
  return store_->Get("ofl/all_ready").status();
}

Status ProcessGroupGloo::ConnectMesh(const std::string& prefix) {
  gloo::transport::tcp::attr attr;
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME")) {
    attr.iface = ifname;
  } else if (IsLoopback(options_.host)) {
    attr.hostname = "127.0.0.1";
  } else {
    char name[256] = {0};
    ::gethostname(name, sizeof(name) - 1);
    attr.hostname = name;
  }
  try {
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank(), size());
    ctx->setTimeout(options_.timeout);
    if (prefix.empty()) {
      ctx->connectFullMesh(*store_, device);
    } else {
      gloo::rendezvous::PrefixStore scoped(prefix, *store_);
      ctx->connectFullMesh(scoped, device);
    }
    context_ = ctx;
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("Gloo could not connect the ranks: ", e.what()));
  }
  return Status();
}

Status AgreeOnGroupMembers(TcpStore& store, const std::string& prefix, int rank,
                           const std::vector<int>& ranks) {
  const std::string mine = absl::StrJoin(ranks, ",");
  RETURN_IF_ERROR(store.Set(absl::StrCat(prefix, "ranks/", rank), {mine.begin(), mine.end()}));
  auto first = store.Get(absl::StrCat(prefix, "ranks/", ranks[0]));
  if (!first.ok())
    return Status(first.status().code(),
                  absl::StrFormat("[new_group] rank %d (the group's first member) did not call "
                                  "new_group within the timeout: %s",
                                  ranks[0], first.status().message()));
  std::string theirs(first->begin(), first->end());
  if (theirs != mine)
    return InvalidArgument(
        "[new_group] the ranks disagree on the group's members: rank %d passed [%s], rank %d "
        "passed [%s] (every rank must call new_group with the same ranks, in the same order of "
        "new_group calls)",
        rank, mine, ranks[0], theirs);
  return Status();
}

StatusOr<std::shared_ptr<ProcessGroupGloo>> ProcessGroupGloo::NewGroup(
    const std::vector<int>& ranks, int64_t index, std::chrono::milliseconds timeout) {
  auto me = std::find(ranks.begin(), ranks.end(), rank());
  if (me == ranks.end())
    return InvalidArgument("[new_group] rank %d is not in ranks [%s]", rank(),
                           absl::StrJoin(ranks, ", "));
  ProcessGroupOptions o = options_;
  o.rank = static_cast<int>(me - ranks.begin());
  o.world_size = static_cast<int>(ranks.size());
  o.timeout = timeout;
  std::shared_ptr<ProcessGroupGloo> pg(new ProcessGroupGloo(o));
  pg->store_ = store_;
  const std::string prefix = absl::StrCat("ofl/group/", index);
  pg->store_prefix_ = prefix + "/";
  RETURN_IF_ERROR(AgreeOnGroupMembers(*store_, prefix + "/", rank(), ranks));
  const std::string mine = absl::StrJoin(ranks, ",");
  Status st = pg->ConnectMesh(prefix + "/");
  if (!st.ok())
    return Status(st.code(), absl::StrFormat("[new_group] ranks [%s]: %s", mine, st.message()));
  Register(pg);
  return pg;
}

StatusOr<std::shared_ptr<Work>> ProcessGroupGloo::Issue(std::string name,
                                                        std::vector<TensorBytes> reads,
                                                        std::vector<TensorBytes> writes, Fn fn) {
  if (shut_down_)
    return absl::FailedPreconditionError(
        absl::StrFormat("[%s] the process group was destroyed", name));
  auto work = std::make_shared<Work>();
  auto self = shared_from_this();
  Fn run = [self, name, fn = std::move(fn)](const std::vector<TensorBytes>& r,
                                            const std::vector<TensorBytes>& w) {
    const int64_t seq = self->op_seq_;
    Status st = fn(r, w);
    // A collective that recorded its signature (CheckSignature) and then failed in Gloo.
    if (!st.ok() && self->op_seq_ != seq) st = self->Diagnose(name, std::move(st));
    return st;
  };
  auto policy = std::make_unique<CollectiveInstructionPolicy>(
      std::move(name), std::move(reads), std::move(writes), order_, std::move(run), work);
  if (t_caller_waits) policy->RunOnIssuingThreadIfReady();
  RETURN_IF_ERROR(vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    return b->Push(CollectiveStreamDevice(), kCollectiveStreamRole, std::move(policy));
  }));
  last_work_ = work;
  return work;
}

Status ProcessGroupGloo::Guard(const char* op, const std::string& what,
                               const std::function<void()>& body) {
  {
    std::lock_guard<std::mutex> lock(broken_mu_);
    if (!broken_.ok())
      return absl::UnavailableError(absl::StrFormat(
          "[%s] rank %d: the process group is unusable after an earlier failure: %s", op, rank(),
          broken_.message()));
  }
  try {
    body();
    return Status();
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(broken_mu_);
    if (!broken_.ok()) return broken_;
    broken_ = absl::UnavailableError(absl::StrFormat(
        "[%s] rank %d of %d (%s): Gloo failed: %s. A peer exited, was killed or did not reach "
        "this %s within the timeout (%d ms)",
        op, rank(), size(), what, e.what(), op, int64_t(options_.timeout.count())));
    return broken_;
  }
}

// Note [Signature checks]
// Gloo aborts the whole process (an uncaught gloo::EnforceNotMet on its I/O thread) when a
// message is longer than the buffer the receiver posted, so ranks that disagree on a
// collective's byte count must find out before any data moves. Exchanging the signature before
// every collective costs one small all-gather (0.1-0.3 ms on loopback: +10..30% on a 1 MB
// all_reduce), so it is exchanged only when it differs from the signature all ranks agreed on
// last. That is safe: after every successful collective all ranks hold the same agreed_sig_ (an
// exchange sets it on all of them; a skip leaves it), so ranks that would skip all pass that
// same signature. If a rank changes it, that rank exchanges while the others run the data op;
// the exchange uses tags of its own (bit 31) and Gloo's all-gather slots, so the two never pair:
// both sides time out instead of aborting, and Diagnose names the mismatch from the store.
// Collectives issued with exchange = false (DDP's buckets, laid out alike on every rank at
// construction) leave agreed_sig_ as it was.
Status ProcessGroupGloo::CheckSignature(const char* op, const std::vector<int64_t>& sig,
                                        const std::string& what, bool exchange) {
  ++op_seq_;
  current_sig_ = sig;
  if (!exchange || !options_.check_signatures || size() == 1) return Status();
  if (!options_.check_every_op && sig == agreed_sig_) return Status();
  signature_exchanges_.fetch_add(1, std::memory_order_relaxed);
  std::vector<int64_t> all(kSigLen * size());
  RETURN_IF_ERROR(Guard(op, what, [&] {
    gloo::AllgatherOptions o(context_);
    o.setInput<int64_t>(const_cast<int64_t*>(sig.data()), kSigLen);
    o.setOutput<int64_t>(all.data(), all.size());
    o.setTag((next_check_tag_++ & 0x7fffffffu) | 0x80000000u);
    o.setTimeout(options_.timeout);
    gloo::allgather(o);
  }));
  bool same = true;
  for (int r = 1; r < size(); ++r)
    same = same && std::memcmp(&all[0], &all[r * kSigLen], kSigLen * sizeof(int64_t)) == 0;
  if (same) {
    agreed_sig_ = sig;
    return Status();
  }
  std::vector<std::string> parts;
  for (int r = 0; r < size(); ++r)
    parts.push_back(absl::StrCat("rank ", r, ": ", DescribeSignature(&all[r * kSigLen])));
  return InvalidArgument(
      "[%s] the ranks disagree (every rank must call the same collective "
      "with the same shape and dtype): %s",
      op, absl::StrJoin(parts, "; "));
}

Status ProcessGroupGloo::Diagnose(const std::string& op, Status failure) {
  if (store_ == nullptr || size() == 1 || current_sig_.size() != kSigLen ||
      failure.code() != absl::StatusCode::kUnavailable)
    return failure;
  // Keys of this op: every rank that reaches here counts the same op_seq_ (the collectives
  // before it succeeded on all ranks). A flag is read with Add(0), which never blocks, so a
  // rank that died or stalls only costs the bounded wait below.
  const std::string base = absl::StrCat(store_prefix_, "diag/", op_seq_, "/");
  const auto* bytes = reinterpret_cast<const char*>(current_sig_.data());
  if (!store_->Set(absl::StrCat(base, "sig/", rank()), {bytes, bytes + kSigLen * sizeof(int64_t)})
           .ok() ||
      !store_->Add(absl::StrCat(base, "flag/", rank()), 1).ok())
    return failure;
  const auto wait =
      std::min<std::chrono::milliseconds>(options_.timeout / 2, std::chrono::milliseconds(5000));
  auto deadline = std::chrono::steady_clock::now() + wait;
  std::vector<int64_t> all(kSigLen * size(), 0);
  std::vector<bool> seen(size(), false);
  std::copy(current_sig_.begin(), current_sig_.end(), all.begin() + rank() * kSigLen);
  seen[rank()] = true;
  bool differs = false;
  bool differs_seen = false;
  for (int missing = size() - 1; missing > 0;) {
    for (int r = 0; r < size(); ++r) {
      if (seen[r]) continue;
      auto flag = store_->Add(absl::StrCat(base, "flag/", r), 0);
      if (!flag.ok()) return failure;
      if (*flag == 0) continue;
      auto sig = store_->Get(absl::StrCat(base, "sig/", r));
      if (!sig.ok() || sig->size() != kSigLen * sizeof(int64_t)) return failure;
      std::memcpy(&all[r * kSigLen], sig->data(), sig->size());
      seen[r] = true;
      --missing;
      differs = differs ||
                !std::equal(current_sig_.begin(), current_sig_.end(), all.begin() + r * kSigLen);
    }
    if (missing == 0 || std::chrono::steady_clock::now() >= deadline) break;
    // A difference is enough to name the mismatch; a short grace lets the other ranks' (which
    // timed out at about the same moment) signatures complete the message.
    if (differs && !differs_seen) {
      deadline = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(1));
      differs_seen = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!differs) return failure;
  std::vector<std::string> parts;
  for (int r = 0; r < size(); ++r)
    parts.push_back(absl::StrCat(
        "rank ", r, ": ",
        seen[r] ? DescribeSignature(&all[r * kSigLen]) : std::string("did not report")));
  Status named = InvalidArgument(
      "[%s] the ranks disagree (every rank must call the same collective with the same shape and "
      "dtype): %s. Found after the Gloo call failed: %s",
      op, absl::StrJoin(parts, "; "), failure.message());
  std::lock_guard<std::mutex> lock(broken_mu_);
  broken_ = absl::UnavailableError(named.message());
  return named;
}

Status ProcessGroupGloo::GlooAllReduce(const char* op, const std::string& what, void* data,
                                       int64_t n, int64_t esize, const ReduceFn& fn, uint32_t tag) {
  return Guard(op, what, [&] {
    RunGlooAllReduce(context_, data, n, esize, fn, tag != 0 ? tag : NextTag(), options_.timeout);
  });
}

StatusOr<std::vector<double>> ProcessGroupGloo::TimeRawGlooAllReduce(const Tensor& t, int iters) {
  ASSIGN_OR_RETURN(TensorBytes tb, BytesOf(t, "raw_gloo_all_reduce"));
  ASSIGN_OR_RETURN(ReduceFn fn, MakeReduceFn(t.dtype(), ReduceOp::kSum, "raw_gloo_all_reduce"));
  if (!tb.blob->dependence()->no_live_access() || (tb.size > 0 && tb.blob->data() == nullptr))
    return absl::FailedPreconditionError(
        "[raw_gloo_all_reduce] the tensor has unfinished work (or no memory yet): sync first");
  if (shut_down_ || size() == 1 || tb.size == 0) return std::vector<double>(iters, 0.0);
  std::vector<double> seconds;
  seconds.reserve(iters);
  Status st = Guard("raw_gloo_all_reduce", DescribeTensor(t), [&] {
    for (int i = 0; i < iters; ++i) {
      const uint32_t tag = (next_raw_tag_++ & 0x1fffffffu) | 0x20000000u;
      const auto t0 = std::chrono::steady_clock::now();
      RunGlooAllReduce(context_, tb.data(), t.numel(), DTypeSize(t.dtype()), fn, tag,
                       options_.timeout);
      seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  });
  RETURN_IF_ERROR(st);
  return seconds;
}

StatusOr<std::shared_ptr<Work>> ProcessGroupGloo::AllReduce(const Tensor& t, ReduceOp op,
                                                            bool check) {
  ASSIGN_OR_RETURN(TensorBytes tb, BytesOf(t, "all_reduce"));
  ASSIGN_OR_RETURN(ReduceFn fn, MakeReduceFn(t.dtype(), op, "all_reduce"));
  auto sig = Signature(kAllReduceOp, &t, static_cast<int64_t>(op));
  const std::string what = DescribeTensor(t);
  const DType dtype = t.dtype();
  const int64_t n = t.numel(), esize = DTypeSize(dtype);
  return Issue("all_reduce", {tb}, {tb}, [=](auto&, const std::vector<TensorBytes>& w) -> Status {
    RETURN_IF_ERROR(CheckSignature("all_reduce", sig, what, check));
    if (n == 0 || size() == 1) return Status();
    RETURN_IF_ERROR(GlooAllReduce("all_reduce", what, w[0].data(), n, esize, fn));
    if (op == ReduceOp::kAvg) DivideInPlace(w[0].data(), dtype, n, size());
    return Status();
  });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupGloo::Broadcast(const Tensor& t, int root) {
  RETURN_IF_ERROR(CheckRank("broadcast", root, size(), "src"));
  ASSIGN_OR_RETURN(TensorBytes tb, BytesOf(t, "broadcast"));
  auto sig = Signature(kBroadcastOp, &t, root);
  const std::string what = DescribeTensor(t);
  return Issue("broadcast", {tb}, {tb}, [=](auto&, const std::vector<TensorBytes>& w) -> Status {
    RETURN_IF_ERROR(CheckSignature("broadcast", sig, what));
    if (w[0].size == 0 || size() == 1) return Status();
    return GlooBroadcast(what, w[0].data(), w[0].size, root, NextTag());
  });
}

Status ProcessGroupGloo::GlooBroadcast(const std::string& what, void* data, int64_t bytes, int root,
                                       uint32_t tag) {
  return Guard("broadcast", what, [&] {
    gloo::BroadcastOptions o(context_);
    o.setOutput<uint8_t>(static_cast<uint8_t*>(data), bytes);
    o.setRoot(root);
    o.setTag(tag);
    o.setTimeout(options_.timeout);
    gloo::broadcast(o);
  });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupGloo::AllGather(const TensorList& outputs,
                                                            const Tensor& input) {
  ASSIGN_OR_RETURN(TensorBytes in, BytesOf(input, "all_gather"));
  ASSIGN_OR_RETURN(auto outs, BytesOfList("all_gather", outputs, input, size(), "output"));
  auto sig = Signature(kAllGatherOp, &input, 0);
  const std::string what = DescribeTensor(input);
  return Issue("all_gather", {in}, outs,
               [=](const std::vector<TensorBytes>& r, const std::vector<TensorBytes>& w) -> Status {
                 RETURN_IF_ERROR(CheckSignature("all_gather", sig, what));
                 const int64_t bytes = r[0].size;
                 if (size() == 1) {
                   std::memmove(w[0].data(), r[0].data(), bytes);
                   return Status();
                 }
                 std::vector<uint8_t> gathered(bytes * size());
                 if (bytes > 0) {
                   RETURN_IF_ERROR(Guard("all_gather", what, [&] {
                     gloo::AllgatherOptions o(context_);
                     o.setInput<uint8_t>(static_cast<uint8_t*>(r[0].data()), bytes);
                     o.setOutput<uint8_t>(gathered.data(), gathered.size());
                     o.setTag(NextTag());
                     o.setTimeout(options_.timeout);
                     gloo::allgather(o);
                   }));
                 }
                 for (int i = 0; i < size(); ++i)
                   std::memcpy(w[i].data(), gathered.data() + i * bytes, bytes);
                 return Status();
               });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupGloo::ReduceScatter(const Tensor& output,
                                                                const TensorList& inputs,
                                                                ReduceOp op) {
  ASSIGN_OR_RETURN(TensorBytes out, BytesOf(output, "reduce_scatter"));
  ASSIGN_OR_RETURN(ReduceFn fn, MakeReduceFn(output.dtype(), op, "reduce_scatter"));
  ASSIGN_OR_RETURN(auto ins, BytesOfList("reduce_scatter", inputs, output, size(), "input"));
  auto sig = Signature(kReduceScatterOp, &output, static_cast<int64_t>(op));
  const std::string what = DescribeTensor(output);
  const DType dtype = output.dtype();
  const int64_t n = output.numel(), esize = DTypeSize(dtype);
  return Issue("reduce_scatter", ins, {out},
               [=](const std::vector<TensorBytes>& r, const std::vector<TensorBytes>& w) -> Status {
                 RETURN_IF_ERROR(CheckSignature("reduce_scatter", sig, what));
                 if (n > 0 && size() > 1)
                   RETURN_IF_ERROR(RingReduceScatter(what, r, w[0].data(), n, esize, fn));
                 else
                   std::memcpy(w[0].data(), r[rank()].data(), w[0].size);
                 if (op == ReduceOp::kAvg) DivideInPlace(w[0].data(), dtype, n, size());
                 return Status();
               });
}

Status ProcessGroupGloo::RingReduceScatter(const std::string& what,
                                           const std::vector<TensorBytes>& blocks, void* out,
                                           int64_t count, int64_t esize, const ReduceFn& fn) {
  // Debian's Gloo (2022) has no reduce-scatter in its options API: a ring over unbound buffers.
  // Step s: send the partial sum of block (rank - s - 1) to the right, receive the left's partial
  // sum of block (rank - s - 2) and add this rank's block to it; after N - 1 steps block `rank`
  // holds every rank's contribution. Each rank sends (N - 1) blocks (an all-reduce of the
  // concatenation sends 2 (N - 1)).
  // No copies of the inputs: step 0 sends this rank's block straight from its input, each later
  // step sends the partial sum the step before produced (two ping-pong blocks), and the last
  // step reduces into `out`.
  const int n = size(), me = rank(), right = (me + 1) % n, left = (me + n - 1) % n;
  const uint64_t slot = kRingSlotPrefix | (uint64_t{NextTag()} << 8);
  const int64_t bytes = count * esize;
  std::vector<uint8_t> acc(bytes * 2), in(bytes);
  auto block = [&](int b) { return blocks[((b % n) + n) % n].data(); };
  return Guard("reduce_scatter", what, [&] {
    auto acc_buf = context_->createUnboundBuffer(acc.data(), acc.size());
    auto in_buf = context_->createUnboundBuffer(in.data(), in.size());
    auto first = context_->createUnboundBuffer(block(me - 1), bytes);
    for (int s = 0; s + 1 < n; ++s) {
      in_buf->recv(left, slot | s);
      auto* sending = s == 0 ? first.get() : acc_buf.get();
      sending->send(right, slot | s, s == 0 ? 0 : ((s - 1) % 2) * bytes, bytes);
      if (!in_buf->waitRecv(options_.timeout)) throw std::runtime_error("recv was aborted");
      void* dst = s + 2 == n ? out : acc.data() + (s % 2) * bytes;
      fn(dst, block(me - s - 2), in.data(), count);
      if (!sending->waitSend(options_.timeout)) throw std::runtime_error("send was aborted");
    }
  });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupGloo::Reduce(const Tensor& t, int root, ReduceOp op) {
  RETURN_IF_ERROR(CheckRank("reduce", root, size(), "dst"));
  ASSIGN_OR_RETURN(TensorBytes tb, BytesOf(t, "reduce"));
  ASSIGN_OR_RETURN(ReduceFn fn, MakeReduceFn(t.dtype(), op, "reduce"));
  auto sig = Signature(kReduceOp, &t, int64_t{root} * 8 + static_cast<int64_t>(op));
  const std::string what = DescribeTensor(t);
  const DType dtype = t.dtype();
  const int64_t n = t.numel(), esize = DTypeSize(dtype);
  return Issue("reduce", {tb}, {tb}, [=](auto&, const std::vector<TensorBytes>& w) -> Status {
    RETURN_IF_ERROR(CheckSignature("reduce", sig, what));
    if (n == 0 || size() == 1) return Status();
    // Non-root ranks keep their tensor: Gloo reduces into a scratch buffer there.
    std::vector<uint8_t> scratch(rank() == root ? 0 : w[0].size);
    RETURN_IF_ERROR(Guard("reduce", what, [&] {
      gloo::ReduceOptions o(context_);
      o.setInput<uint8_t>(static_cast<uint8_t*>(w[0].data()), w[0].size);
      SetOutput(o, rank() == root ? w[0].data() : scratch.data(), n, esize);
      o.setRoot(root);
      o.setReduceFunction(fn);
      o.setTag(NextTag());
      o.setTimeout(options_.timeout);
      gloo::reduce(o);
    }));
    if (op == ReduceOp::kAvg && rank() == root) DivideInPlace(w[0].data(), dtype, n, size());
    return Status();
  });
}

StatusOr<std::vector<TensorBytes>> ProcessGroupGloo::RootList(const char* op,
                                                              const TensorList& list,
                                                              const Tensor& like, int root,
                                                              const char* role) {
  if (rank() == root) return BytesOfList(op, list, like, size(), role);
  if (!list.empty())
    return InvalidArgument("[%s] only rank %d (the root) passes a list of %ss", op, root, role);
  return std::vector<TensorBytes>();
}

StatusOr<std::shared_ptr<Work>> ProcessGroupGloo::Gather(const TensorList& outputs,
                                                         const Tensor& input, int root) {
  RETURN_IF_ERROR(CheckRank("gather", root, size(), "dst"));
  ASSIGN_OR_RETURN(TensorBytes in, BytesOf(input, "gather"));
  ASSIGN_OR_RETURN(auto outs, RootList("gather", outputs, input, root, "output"));
  auto sig = Signature(kGatherOp, &input, root);
  const std::string what = DescribeTensor(input);
  return Issue("gather", {in}, outs,
               [=](const std::vector<TensorBytes>& r, const std::vector<TensorBytes>& w) -> Status {
                 RETURN_IF_ERROR(CheckSignature("gather", sig, what));
                 const int64_t bytes = r[0].size;
                 std::vector<uint8_t> all(rank() == root ? bytes * size() : 0);
                 if (size() == 1) {
                   std::memcpy(all.data(), r[0].data(), bytes);
                 } else if (bytes > 0) {
                   RETURN_IF_ERROR(Guard("gather", what, [&] {
                     gloo::GatherOptions o(context_);
                     o.setInput<uint8_t>(static_cast<uint8_t*>(r[0].data()), bytes);
                     if (rank() == root) o.setOutput<uint8_t>(all.data(), all.size());
                     o.setRoot(root);
                     o.setTag(NextTag());
                     o.setTimeout(options_.timeout);
                     gloo::gather(o);
                   }));
                 }
                 for (size_t i = 0; i < w.size(); ++i)
                   std::memcpy(w[i].data(), all.data() + i * bytes, bytes);
                 return Status();
               });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupGloo::Scatter(const Tensor& output,
                                                          const TensorList& inputs, int root) {
  RETURN_IF_ERROR(CheckRank("scatter", root, size(), "src"));
  ASSIGN_OR_RETURN(TensorBytes out, BytesOf(output, "scatter"));
  ASSIGN_OR_RETURN(auto ins, RootList("scatter", inputs, output, root, "input"));
  auto sig = Signature(kScatterOp, &output, root);
  const std::string what = DescribeTensor(output);
  return Issue("scatter", ins, {out},
               [=](const std::vector<TensorBytes>& r, const std::vector<TensorBytes>& w) -> Status {
                 RETURN_IF_ERROR(CheckSignature("scatter", sig, what));
                 const int64_t bytes = w[0].size;
                 if (size() == 1) {
                   std::memmove(w[0].data(), r[0].data(), bytes);
                   return Status();
                 }
                 if (bytes == 0) return Status();
                 return Guard("scatter", what, [&] {
                   gloo::ScatterOptions o(context_);
                   if (rank() == root) {
                     std::vector<uint8_t*> ptrs;
                     for (const TensorBytes& b : r) ptrs.push_back(static_cast<uint8_t*>(b.data()));
                     o.setInputs<uint8_t>(ptrs, bytes);
                   }
                   o.setOutput<uint8_t>(static_cast<uint8_t*>(w[0].data()), bytes);
                   o.setRoot(root);
                   o.setTag(NextTag());
                   o.setTimeout(options_.timeout);
                   gloo::scatter(o);
                 });
               });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupGloo::Send(const Tensor& t, int dst, int tag) {
  RETURN_IF_ERROR(CheckRank("send", dst, size(), "dst"));
  if (dst == rank()) return InvalidArgument("[send] rank %d cannot send to itself", rank());
  ASSIGN_OR_RETURN(TensorBytes tb, BytesOf(t, "send"));
  const std::string what = absl::StrCat(DescribeTensor(t), " to rank ", dst);
  return Issue("send", {tb}, {}, [=](const std::vector<TensorBytes>& r, auto&) -> Status {
    if (r[0].size == 0) return Status();
    return Guard("send", what, [&] {
      auto buf = context_->createUnboundBuffer(r[0].data(), r[0].size);
      buf->send(dst, kP2PSlotPrefix | static_cast<uint32_t>(tag));
      if (!buf->waitSend(options_.timeout)) throw std::runtime_error("send was aborted");
    });
  });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupGloo::Recv(const Tensor& t, int src, int tag) {
  RETURN_IF_ERROR(CheckRank("recv", src, size(), "src"));
  if (src == rank()) return InvalidArgument("[recv] rank %d cannot receive from itself", rank());
  ASSIGN_OR_RETURN(TensorBytes tb, BytesOf(t, "recv"));
  const std::string what = absl::StrCat(DescribeTensor(t), " from rank ", src);
  return Issue("recv", {}, {tb}, [=](auto&, const std::vector<TensorBytes>& w) -> Status {
    if (w[0].size == 0) return Status();
    return Guard("recv", what, [&] {
      auto buf = context_->createUnboundBuffer(w[0].data(), w[0].size);
      buf->recv(src, kP2PSlotPrefix | static_cast<uint32_t>(tag));
      if (!buf->waitRecv(options_.timeout)) throw std::runtime_error("recv was aborted");
    });
  });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupGloo::Barrier() {
  auto sig = Signature(kBarrierOp, nullptr, 0);
  return Issue("barrier", {}, {}, [=](auto&, auto&) -> Status {
    RETURN_IF_ERROR(CheckSignature("barrier", sig, "barrier"));
    if (size() == 1) return Status();
    return Guard("barrier", "barrier", [&] {
      gloo::BarrierOptions o(context_);
      o.setTag(NextTag());
      o.setTimeout(options_.timeout);
      gloo::barrier(o);
    });
  });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupGloo::AllToAll(const Tensor& output,
                                                           const Tensor& input,
                                                           const std::vector<int64_t>& out_splits,
                                                           const std::vector<int64_t>& in_splits) {
  const char* op = "all_to_all_single";
  const std::string what =
      absl::StrCat("input ", DescribeTensor(input), ", output ", DescribeTensor(output));
  if (input.dtype() != output.dtype())
    return InvalidArgument("[%s] rank %d: input and output must have one dtype: %s", op, rank(),
                           what);
  if (input.ndim() == 0 || output.ndim() == 0)
    return InvalidArgument("[%s] rank %d: tensors need at least one dimension: %s", op, rank(),
                           what);
  const auto& in_dims = input.shape().dims();
  const auto& out_dims = output.shape().dims();
  if (!std::equal(in_dims.begin() + 1, in_dims.end(), out_dims.begin() + 1, out_dims.end()))
    return InvalidArgument("[%s] rank %d: input and output must agree beyond dim 0: %s", op, rank(),
                           what);
  for (const auto* splits : {&in_splits, &out_splits}) {
    const bool is_in = splits == &in_splits;
    const Tensor& t = is_in ? input : output;
    const char* role = is_in ? "input_split_sizes" : "output_split_sizes";
    if (static_cast<int>(splits->size()) != size())
      return InvalidArgument("[%s] rank %d: %s needs world_size (%d) entries: got %d", op, rank(),
                             role, size(), int(splits->size()));
    int64_t sum = 0;
    for (int64_t v : *splits) {
      if (v < 0)
        return InvalidArgument("[%s] rank %d: %s must be >= 0: got [%s]", op, rank(), role,
                               absl::StrJoin(*splits, ", "));
      sum += v;
    }
    if (sum != t.dim(0))
      return InvalidArgument("[%s] rank %d: %s [%s] must sum to dim 0 of %s (%d)", op, rank(), role,
                             absl::StrJoin(*splits, ", "), DescribeTensor(t), t.dim(0));
  }
  ASSIGN_OR_RETURN(TensorBytes in, BytesOf(input, op));
  ASSIGN_OR_RETURN(TensorBytes out, BytesOf(output, op));
  int64_t row_bytes = DTypeSize(input.dtype());
  for (size_t i = 1; i < in_dims.size(); ++i) row_bytes *= in_dims[i];
  auto sig = Signature(kAllToAllOp, &input, 0);
  sig[4] = -1;  // dim 0 differs between ranks with uneven splits; the splits are checked below
  const int n = size();
  std::vector<int64_t> splits(in_splits);
  splits.insert(splits.end(), out_splits.begin(), out_splits.end());
  return Issue(
      op, {in}, {out},
      [=](const std::vector<TensorBytes>& r, const std::vector<TensorBytes>& w) -> Status {
        RETURN_IF_ERROR(CheckSignature(op, sig, what));
        if (n == 1) {
          std::memmove(w[0].data(), r[0].data(), r[0].size);
          return Status();
        }
        if (options_.check_signatures) {
          // Every rank sees every rank's splits, so all fail alike on a mismatch.
          std::vector<int64_t> all(2 * n * n);
          RETURN_IF_ERROR(Guard(op, what, [&] {
            gloo::AllgatherOptions o(context_);
            o.setInput<int64_t>(const_cast<int64_t*>(splits.data()), 2 * n);
            o.setOutput<int64_t>(all.data(), all.size());
            o.setTag(NextTag());
            o.setTimeout(options_.timeout);
            gloo::allgather(o);
          }));
          std::vector<std::string> bad;
          for (int src = 0; src < n; ++src)
            for (int dst = 0; dst < n; ++dst) {
              const int64_t sent = all[src * 2 * n + dst];
              const int64_t expected = all[dst * 2 * n + n + src];
              if (sent != expected)
                bad.push_back(absl::StrFormat("rank %d sends %d rows to rank %d, which expects %d",
                                              src, sent, dst, expected));
            }
          if (!bad.empty())
            return InvalidArgument(
                "[%s] the split sizes do not pair up (input_split_sizes[j] of rank i "
                "must equal output_split_sizes[i] of rank j): %s",
                op, absl::StrJoin(bad, "; "));
        }
        // gloo::alltoallv in bytes; a rank with nothing to send or receive still
        // takes part (a one-byte stand-in buffer, 0 bytes per peer).
        std::vector<int64_t> in_bytes(n), out_bytes(n);
        for (int i = 0; i < n; ++i) {
          in_bytes[i] = in_splits[i] * row_bytes;
          out_bytes[i] = out_splits[i] * row_bytes;
        }
        uint8_t spare[2] = {0, 0};
        auto* src = r[0].size > 0 ? static_cast<uint8_t*>(r[0].data()) : &spare[0];
        auto* dst = w[0].size > 0 ? static_cast<uint8_t*>(w[0].data()) : &spare[1];
        return Guard(op, what, [&] {
          gloo::AlltoallvOptions o(context_);
          o.setInput<uint8_t>(src, in_bytes);
          o.setOutput<uint8_t>(dst, out_bytes);
          o.setTag(NextTag());
          o.setTimeout(options_.timeout);
          gloo::alltoallv(o);
        });
      });
}

StatusOr<std::shared_ptr<Work>> ProcessGroupGloo::MonitoredBarrier(
    std::chrono::milliseconds timeout, bool wait_all_ranks) {
  const char* op = "monitored_barrier";
  if (timeout.count() <= 0)
    return InvalidArgument("[%s] the timeout must be positive: got %d ms", op,
                           int64_t(timeout.count()));
  return Issue(op, {}, {}, [=](auto&, auto&) -> Status {
    // No signature exchange (it would wait for the very ranks this barrier is meant to name),
    // and the ranks meet through the store, not Gloo: a Gloo wait that times out closes every
    // connection of the context, while the store's waits leave it usable, so rank 0 can still
    // tell the ranks that did arrive.
    RETURN_IF_ERROR(Guard(op, "barrier", [] {}));  // fails at once when the group is broken
    if (size() == 1) return Status();
    const std::string base = absl::StrCat(store_prefix_, "monitored_barrier/", NextTag(), "/");
    const std::string answer_key = base + "answer";
    const int64_t ms = timeout.count();
    std::string failure;
    if (rank() != 0) {
      // Rank 0 answers within `timeout` of its own arrival (plus its store round trips): wait
      // for that, then for the answer with a margin, so a rank 0 that answers right at its
      // deadline is not taken for one that never answers.
      Status st = store_->Set(absl::StrCat(base, rank()), {'1'});
      if (st.ok()) st = store_->Wait({base + "0"}, timeout);
      if (st.ok()) st = store_->Wait({answer_key}, timeout + timeout / 2 + std::chrono::seconds(1));
      StatusOr<std::vector<char>> answer = st.ok() ? store_->Get(answer_key) : st;
      if (!answer.ok()) {
        failure = absl::StrFormat(
            "[%s] [Rank %d]: Rank %d successfully reached monitoredBarrier, but received errors "
            "while waiting for rank 0 within %d ms: %s",
            op, rank(), rank(), ms, answer.status().message());
      } else if (std::string(answer->begin(), answer->end()) != "ok") {
        failure = absl::StrFormat("[%s] [Rank %d]: rank 0 reported: %s", op, rank(),
                                  std::string(answer->begin(), answer->end()));
      }
    } else {
      const auto deadline = std::chrono::steady_clock::now() + timeout;
      RETURN_IF_ERROR(store_->Set(base + "0", {'1'}));
      std::vector<int> missing;
      Status other;  // a store failure other than a timeout
      for (int r = 1; r < size() && (missing.empty() || wait_all_ranks); ++r) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        const std::string key = absl::StrCat(base, r);
        Status st = left.count() > 0 ? store_->Wait({key}, left) : Status();
        if (st.ok() && left.count() <= 0) {
          auto there = store_->Check({key});
          st = !there.ok() ? there.status()
               : *there    ? Status()
                           : absl::DeadlineExceededError("past the deadline");
        }
        if (absl::IsDeadlineExceeded(st)) {
          missing.push_back(r);
        } else if (!st.ok()) {
          other = st;
          break;
        }
      }
      if (!missing.empty())
        failure =
            absl::StrFormat("[%s] [Rank 0]: Rank%s %s failed to pass monitoredBarrier in %d ms", op,
                            missing.size() > 1 ? "s" : "", absl::StrJoin(missing, ", "), ms);
      else if (!other.ok())
        failure = absl::StrFormat("[%s] [Rank 0]: the store failed: %s", op, other.message());
      const std::string answer = failure.empty() ? "ok" : failure;
      Status st = store_->Set(answer_key, {answer.begin(), answer.end()});
      if (failure.empty() && !st.ok())
        failure = absl::StrFormat("[%s] [Rank 0]: could not answer the other ranks: %s", op,
                                  st.message());
    }
    if (failure.empty()) return Status();
    // The ranks that did not arrive are behind in the group's collective order: later
    // collectives would pair wrongly, so the group fails them at once.
    std::lock_guard<std::mutex> lock(broken_mu_);
    if (broken_.ok()) broken_ = absl::DeadlineExceededError(failure);
    return absl::DeadlineExceededError(failure);
  });
}

Status ProcessGroupGloo::Shutdown() {
  if (shut_down_) return Status();
  shut_down_ = true;
  StopGraphWorker();
  Status st;
  if (last_work_) st = last_work_->Wait();
  last_work_.reset();
  context_.reset();
  store_.reset();
  return st;
}

}  // namespace distributed
}  // namespace oneflow_like
