#include "compiler/backends/cpu/cpu_thunks.h"

#include "compiler/library/external_calls.h"

#include <cblas.h>

#include <cstring>
#include <mutex>

#include "device/cpu/gemm.h"
#include "oneflow_like/base/blas_threads.h"
#include "oneflow_like/base/thread_pool.h"

#include "compiler/eval/hlo_evaluator.h"
#include "compiler/library/library_ops.h"

namespace oneflow_like::hlo {

StatusOr<GemmThunk::Config> GemmConfigFor(const HloInstruction& dot) {
  const DotDims& d = dot.attrs().dot;
  const HloShape &l = dot.operand(0)->shape(), &r = dot.operand(1)->shape();
  const int64_t nb = d.lhs_batch.size();
  if (nb > 1 || d.lhs_contracting.size() != 1 || l.rank() != nb + 2 || r.rank() != nb + 2)
    return Unimplemented("[gemm] %s is not a canonical dot", dot.name());
  if (l.dtype() != DType::kF32 && l.dtype() != DType::kF64)
    return Unimplemented("[gemm] %s type", DTypeName(l.dtype()));
  GemmThunk::Config c;
  c.dtype = l.dtype();
  c.batch = nb ? l.dim(0) : 1;
  c.lhs_transposed = d.lhs_contracting[0] == nb;
  c.rhs_transposed = d.rhs_contracting[0] == nb + 1;
  c.m = l.dim(c.lhs_transposed ? nb + 1 : nb);
  c.k = l.dim(c.lhs_transposed ? nb : nb + 1);
  c.n = r.dim(c.rhs_transposed ? nb : nb + 1);
  return c;
}

cpu::GemmShape GemmThunk::Shape() const {
  cpu::GemmShape s;
  s.ta = c_.lhs_transposed, s.tb = c_.rhs_transposed;
  s.m = c_.m, s.n = c_.n, s.k = c_.k;
  s.lda = c_.lhs_transposed ? c_.m : c_.k, s.ldb = c_.rhs_transposed ? c_.k : c_.n, s.ldc = c_.n;
  if (c_.batch > 1) s.SetBatch(c_.batch, c_.m * c_.k, c_.k * c_.n, c_.m * c_.n);
  return s;
}

Status GemmThunk::ExecuteOnStream(const ExecuteParams& p) {
  if (c_.dtype == DType::kF32) {
    const auto* a = reinterpret_cast<const float*>(p.buffers->Get(lhs_));
    const auto* b = reinterpret_cast<const float*>(p.buffers->Get(rhs_));
    // The implementation is chosen on the first run, by timing both on the real operands (XLA
    // autotunes GEMM algorithms the same way); ONEFLOW_LIKE_GEMM_AUTOTUNE=0 keeps the fixed rule.
    std::call_once(tuned_, [&] {
      static const bool autotune = [] {
        const char* e = std::getenv("ONEFLOW_LIKE_GEMM_AUTOTUNE");
        return e == nullptr || e[0] != '0';
      }();
      impl_ = autotune ? cpu::AutotuneGemm(Shape(), a, b) : cpu::ChooseGemmImpl(Shape());
    });
    RETURN_IF_ERROR(cpu::Sgemm(Shape(), 1.0f, a, b, 0.0f,
                               reinterpret_cast<float*>(p.buffers->Get(out_)), impl_));
  } else {
    InitBlasThreads();
    const auto ta = c_.lhs_transposed ? CblasTrans : CblasNoTrans,
               tb = c_.rhs_transposed ? CblasTrans : CblasNoTrans;
    const int64_t lda = c_.lhs_transposed ? c_.m : c_.k, ldb = c_.rhs_transposed ? c_.k : c_.n;
    for (int64_t b = 0; b < c_.batch; ++b) {
      auto* a = reinterpret_cast<const double*>(p.buffers->Get(lhs_)) + b * c_.m * c_.k;
      auto* bb = reinterpret_cast<const double*>(p.buffers->Get(rhs_)) + b * c_.k * c_.n;
      auto* o = reinterpret_cast<double*>(p.buffers->Get(out_)) + b * c_.m * c_.n;
      cblas_dgemm(CblasRowMajor, ta, tb, c_.m, c_.n, c_.k, 1.0, a, lda, bb, ldb, 0.0, o, c_.n);
    }
  }
  return absl::OkStatus();
}

std::string GemmThunk::Details() const {
  const char* impl = c_.dtype != DType::kF32 ? "openblas" : cpu::GemmImplName(impl_.load());
  return absl::StrFormat("%s batch=%d m=%d n=%d k=%d%s%s lhs=%s rhs=%s out=%s impl=%s",
                         DTypeName(c_.dtype), c_.batch, c_.m, c_.n, c_.k,
                         c_.lhs_transposed ? " lhsT" : "", c_.rhs_transposed ? " rhsT" : "",
                         lhs_.ToString(), rhs_.ToString(), out_.ToString(), impl);
}

namespace {

DimVector Strides(const DimVector& dims) {
  DimVector s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * dims[i + 1];
  return s;
}

template <typename T>
void DirectConvolution(const HloInstruction& inst, const T* in, const T* k, T* out) {
  const ConvDims& cd = inst.attrs().conv;
  const HloShape &is = inst.operand(0)->shape(), &ks = inst.operand(1)->shape(), &os = inst.shape();
  const DimVector ist = Strides(is.dims()), kst = Strides(ks.dims()), ost = Strides(os.dims());
  const int64_t ns = cd.in_spatial.size(), groups = inst.attrs().feature_group_count;
  const int64_t cin_g = ks.dim(cd.k_in), cout_g = ks.dim(cd.k_out) / groups;
  std::vector<WindowDim> win(ns);
  for (int64_t s = 0; s < ns; ++s)
    win[s] =
        inst.attrs().window.empty() ? WindowDim{ks.dim(cd.k_spatial[s])} : inst.attrs().window[s];
  DimVector ksp;
  for (int64_t s : cd.k_spatial) ksp.push_back(ks.dim(s));
  ForEachIndex(os.dims(), [&](const DimVector& o) {
    const int64_t oc = o[cd.out_feature], g = oc / cout_g;
    T acc = 0;
    ForEachIndex(ksp, [&](const DimVector& kp) {
      int64_t in_off = o[cd.out_batch] * ist[cd.in_batch], k_off = oc * kst[cd.k_out];
      for (int64_t s = 0; s < ns; ++s) {
        const WindowDim& w = win[s];
        int64_t pos = o[cd.out_spatial[s]] * w.stride - w.pad_lo + kp[s] * w.rhs_dilation;
        if (pos < 0 || pos % w.lhs_dilation != 0) return true;
        pos /= w.lhs_dilation;
        if (pos >= is.dim(cd.in_spatial[s])) return true;
        in_off += pos * ist[cd.in_spatial[s]];
        k_off += kp[s] * kst[cd.k_spatial[s]];
      }
      for (int64_t c = 0; c < cin_g; ++c)
        acc += in[in_off + (g * cin_g + c) * ist[cd.in_feature]] * k[k_off + c * kst[cd.k_in]];
      return true;
    });
    out[LinearIndex(os.dims(), o)] = acc;
    return true;
  });
}

}  // namespace

Status InstructionThunk::ExecuteOnStream(const ExecuteParams& p) {
  switch (kind()) {
    case Kind::kConvolution: return RunConvolution(p);
    case Kind::kLibraryCall: return RunLibraryCall(p);
    default: return RunEvaluator(p);
  }
}

Status InstructionThunk::RunConvolution(const ExecuteParams& p) {
  const char* in = p.buffers->Get(operands_[0]);
  const char* k = p.buffers->Get(operands_[1]);
  char* out = p.buffers->Get(results_[0]);
  if (inst_->shape().dtype() == DType::kF32)
    DirectConvolution(*inst_, reinterpret_cast<const float*>(in), reinterpret_cast<const float*>(k),
                      reinterpret_cast<float*>(out));
  else if (inst_->shape().dtype() == DType::kF64)
    DirectConvolution(*inst_, reinterpret_cast<const double*>(in),
                      reinterpret_cast<const double*>(k), reinterpret_cast<double*>(out));
  else
    return Unimplemented("[convolution] %s", DTypeName(inst_->shape().dtype()));
  return absl::OkStatus();
}

Status InstructionThunk::RunLibraryCall(const ExecuteParams& p) {
  const auto& attrs = inst_->attrs();
  if (const ExternalCallFn* fn = FindExternalCall(attrs.custom_call_target)) {
    std::vector<ExternalBuffer> ins, outs;
    for (int64_t i = 0; i < inst_->operand_count(); ++i) {
      const HloShape& s = inst_->operand(i)->shape();
      ins.push_back({p.buffers->Get(operands_[i]), s.dtype(), s.dims()});
    }
    const HloShape& rs = inst_->shape();
    for (size_t k = 0; k < results_.size(); ++k) {
      const HloShape& s = rs.is_tuple() ? rs.tuple_shapes()[k] : rs;
      outs.push_back({p.buffers->Get(results_[k]), s.dtype(), s.dims()});
    }
    return (*fn)(attrs.custom_call_target, attrs.backend_config, ins, outs);
  }
  std::vector<library::Operand> ops;
  for (int64_t i = 0; i < inst_->operand_count(); ++i)
    ops.push_back({p.buffers->Get(operands_[i]), inst_->operand(i)->shape().dims()});
  const auto& a = inst_->attrs();
  char* out = p.buffers->Get(results_[0]);
  if (inst_->shape().dtype() == DType::kF32)
    return library::RunLibraryCall<float>(a.custom_call_target, a.backend_config, ops,
                                          reinterpret_cast<float*>(out), inst_->shape().dims());
  return library::RunLibraryCall<double>(a.custom_call_target, a.backend_config, ops,
                                         reinterpret_cast<double*>(out), inst_->shape().dims());
}

Status InstructionThunk::RunEvaluator(const ExecuteParams& p) {
  std::vector<Literal> args;
  std::vector<const Literal*> ptrs;
  args.reserve(inst_->operand_count());
  for (int64_t i = 0; i < inst_->operand_count(); ++i) {
    const HloShape& s = inst_->operand(i)->shape();
    if (s.is_tuple()) return Unimplemented("[evaluator thunk] tuple operand of %s", inst_->name());
    args.push_back(Literal::FromBytes(s, p.buffers->Get(operands_[i])));
  }
  for (auto& a : args) ptrs.push_back(&a);
  HloEvaluator ev;
  ASSIGN_OR_RETURN(Literal out, ev.EvaluateInstruction(*inst_, ptrs));
  std::vector<const Literal*> leaves;
  std::function<void(const Literal&)> flatten = [&](const Literal& l) {
    if (l.shape.is_tuple()) {
      for (auto& e : l.elements) flatten(e);
    } else
      leaves.push_back(&l);
  };
  flatten(out);
  if (leaves.size() != results_.size())
    return Internal("[evaluator thunk] %s result count", inst_->name());
  for (size_t k = 0; k < leaves.size(); ++k) {
    Literal leaf = *leaves[k];
    std::vector<char> bytes = leaf.ToBytes();
    std::memcpy(p.buffers->Get(results_[k]), bytes.data(), bytes.size());
  }
  return absl::OkStatus();
}

std::string InstructionThunk::Details() const {
  std::string s = HloOpcodeString(inst_->opcode());
  if (inst_->opcode() == HloOpcode::kCustomCall)
    absl::StrAppend(&s, " \"", inst_->attrs().custom_call_target, "\"");
  for (const auto& r : results_) absl::StrAppend(&s, " -> ", r.ToString());
  return s;
}

}  // namespace oneflow_like::hlo
