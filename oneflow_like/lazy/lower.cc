#include "oneflow_like/lazy/lower.h"

#include <mutex>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace oneflow_like {
namespace lazy {
namespace {

absl::flat_hash_map<std::string, LowerFn>& Lowerings() {
  static auto* m = new absl::flat_hash_map<std::string, LowerFn>();
  return *m;
}

// Attribute names must outlive every AttrMap (AttrMap keys are C strings): intern them.
const char* Intern(const std::string& s) {
  static std::mutex mu;
  static auto* pool = new std::set<std::string>();
  std::lock_guard<std::mutex> l(mu);
  return pool->insert(s).first->c_str();
}

hlo::HloShape ShapeOf(const TensorMeta& m) {
  return hlo::HloShape(m.dtype, m.shape.dims());
}

}  // namespace

void RegisterLowering(const char* op, LowerFn fn) {
  Lowerings()[op] = fn;
}

std::string EncodeAttrs(const AttrMap& attrs) {
  std::vector<std::string> parts;
  for (auto& [name, v] : attrs.items()) {
    std::string s = std::visit(
        [&](auto&& x) -> std::string {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, int64_t>)
            return absl::StrCat(name, ":i=", x);
          else if constexpr (std::is_same_v<T, double>)
            return absl::StrFormat("%s:f=%.17g", name, x);
          else if constexpr (std::is_same_v<T, bool>)
            return absl::StrCat(name, ":b=", x ? 1 : 0);
          else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
            return absl::StrCat(name, ":I=", absl::StrJoin(x, ","));
          else if constexpr (std::is_same_v<T, std::vector<double>>) {
            std::vector<std::string> f;
            for (double d : x) f.push_back(absl::StrFormat("%.17g", d));
            return absl::StrCat(name, ":F=", absl::StrJoin(f, ","));
          } else if constexpr (std::is_same_v<T, DType>)
            return absl::StrCat(name, ":d=", DTypeName(x));
          else
            return absl::StrCat(name, ":s=", absl::BytesToHexString(x));
        },
        v);
    parts.push_back(s);
  }
  return absl::StrJoin(parts, ";");
}

StatusOr<AttrMap> DecodeAttrs(const std::string& text) {
  AttrMap m;
  if (text.empty()) return m;
  for (absl::string_view part : absl::StrSplit(text, ';')) {
    size_t colon = part.find(':'), eq = part.find('=');
    if (colon == absl::string_view::npos || eq != colon + 2)
      return InvalidArgument("[attrs] malformed entry '%s'", std::string(part));
    const char* name = Intern(std::string(part.substr(0, colon)));
    char type = part[colon + 1];
    std::string val(part.substr(eq + 1));
    switch (type) {
      case 'i': {
        int64_t x;
        if (!absl::SimpleAtoi(val, &x)) return InvalidArgument("[attrs] bad int '%s'", val);
        m.Set(name, x);
        break;
      }
      case 'f': {
        double x;
        if (!absl::SimpleAtod(val, &x)) return InvalidArgument("[attrs] bad float '%s'", val);
        m.Set(name, x);
        break;
      }
      case 'b': m.Set(name, val == "1"); break;
      case 'I': {
        std::vector<int64_t> xs;
        for (absl::string_view e : absl::StrSplit(val, ',', absl::SkipEmpty())) {
          int64_t x;
          if (!absl::SimpleAtoi(e, &x)) return InvalidArgument("[attrs] bad int list '%s'", val);
          xs.push_back(x);
        }
        m.Set(name, xs);
        break;
      }
      case 'F': {
        std::vector<double> xs;
        for (absl::string_view e : absl::StrSplit(val, ',', absl::SkipEmpty())) {
          double x;
          if (!absl::SimpleAtod(e, &x)) return InvalidArgument("[attrs] bad float list '%s'", val);
          xs.push_back(x);
        }
        m.Set(name, xs);
        break;
      }
      case 'd': {
        ASSIGN_OR_RETURN(DType d, DTypeFromName(val));
        m.Set(name, d);
        break;
      }
      case 's': m.Set(name, absl::HexStringToBytes(val)); break;
      default: return InvalidArgument("[attrs] unknown type tag '%c'", type);
    }
  }
  return m;
}

Status LowerCtx::LowerAsKernelCall(const TracedOp& op) {
  std::vector<hlo::HloInstruction*> operands;
  for (size_t i = 0; i < op.inputs.size(); ++i) operands.push_back(in(op, static_cast<int>(i)));
  std::string target = absl::StrCat("ofl.kernel.", op.op->name);
  std::string config = EncodeAttrs(op.attrs);
  if (op.outputs.size() == 1) {
    ASSIGN_OR_RETURN(auto* h, b_->CustomCall(target, operands, ShapeOf(out_meta(op, 0)), config));
    set(op, 0, h);
    return Status();
  }
  std::vector<hlo::HloShape> shapes;
  for (size_t i = 0; i < op.outputs.size(); ++i)
    shapes.push_back(ShapeOf(out_meta(op, static_cast<int>(i))));
  ASSIGN_OR_RETURN(auto* t, b_->CustomCall(target, operands, hlo::HloShape::Tuple(shapes), config));
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    ASSIGN_OR_RETURN(auto* g, b_->GetTupleElement(t, static_cast<int64_t>(i)));
    set(op, static_cast<int>(i), g);
  }
  return Status();
}

// A view op without a lowering: computes the view of a contiguous input with the op's own view
// function and emits "ofl.view" (a strided copy into a contiguous result) with those strides.
Status LowerViewAsStridedCopy(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& in = ctx.in_meta(op, 0);
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = in.shape;
  impl->strides = ContiguousStrides(in.shape);
  impl->dtype = in.dtype;
  impl->device = in.device;
  Shape shape;
  DimVector strides;
  int64_t offset = 0;
  RETURN_IF_ERROR(op.op->view(Tensor(impl), op.attrs, &shape, &strides, &offset));
  AttrMap cfg;
  cfg.Set("strides", std::vector<int64_t>(strides.begin(), strides.end()));
  cfg.Set("offset", offset);
  ASSIGN_OR_RETURN(auto* h, ctx.b().CustomCall("ofl.view", {ctx.in(op, 0)},
                                               ShapeOf(ctx.out_meta(op, 0)), EncodeAttrs(cfg)));
  ctx.set(op, 0, h);
  return Status();
}

StatusOr<std::unique_ptr<hlo::HloModule>> LowerTrace(const Trace& trace, const std::string& name,
                                                     LowerStats* stats,
                                                     const LowerOptions& options) {
  auto module = std::make_unique<hlo::HloModule>(name);
  hlo::HloBuilder b(module.get(), "main");
  std::vector<hlo::HloInstruction*> values(trace.values().size(), nullptr);
  // Parameters: graph inputs, then captured tensors.
  std::vector<int64_t> input_values(trace.num_inputs()), capture_values(trace.captured().size());
  for (size_t v = 0; v < trace.values().size(); ++v) {
    const TracedValue& tv = trace.values()[v];
    if (tv.kind == TracedValue::kInput) input_values[tv.index] = static_cast<int64_t>(v);
    if (tv.kind == TracedValue::kCaptured) capture_values[tv.index] = static_cast<int64_t>(v);
  }
  for (size_t i = 0; i < input_values.size(); ++i)
    values[input_values[i]] =
        b.Parameter(ShapeOf(trace.values()[input_values[i]].meta), absl::StrCat("input", i));
  for (size_t i = 0; i < capture_values.size(); ++i)
    values[capture_values[i]] =
        b.Parameter(ShapeOf(trace.values()[capture_values[i]].meta), absl::StrCat("captured", i));
  LowerCtx ctx(&b, &values, &trace, options);
  for (const TracedOp& op : trace.ops()) {
    auto it = options.all_kernel_calls ? Lowerings().end() : Lowerings().find(op.op->name);
    if (it != Lowerings().end()) {
      Status s = it->second(ctx, op);
      if (!s.ok()) return Status(s.code(), absl::StrCat("[lower ", op.op->name, "] ", s.message()));
      // A lowering may fall back to the kernel call for dtypes/attrs it does not cover.
      const hlo::HloInstruction* h = op.outputs.empty() ? nullptr : values[op.outputs[0]];
      if (h && h->opcode() == hlo::HloOpcode::kGetTupleElement) h = h->operand(0);
      bool fell_back = h && h->opcode() == hlo::HloOpcode::kCustomCall &&
                       absl::StartsWith(h->attrs().custom_call_target, "ofl.kernel.");
      for (int64_t v : op.inputs)
        fell_back = fell_back && values[v] != values[op.outputs[0]];  // not an identity
      if (stats && fell_back) {
        stats->kernel_calls++;
        stats->kernel_call_ops.push_back(op.op->name);
      } else if (stats)
        stats->lowered++;
    } else if (op.op->view != nullptr) {
      RETURN_IF_ERROR(LowerViewAsStridedCopy(ctx, op));
      if (stats) stats->lowered++;
    } else {
      RETURN_IF_ERROR(ctx.LowerAsKernelCall(op));
      if (stats) {
        stats->kernel_calls++;
        stats->kernel_call_ops.push_back(op.op->name);
      }
    }
  }
  if (stats) stats->rng_seed_parameter = ctx.uses_rng_seed();
  std::vector<hlo::HloInstruction*> results;
  for (int64_t v : trace.output_values()) results.push_back(values[v]);
  for (auto& [capture, v] : trace.Assignments()) results.push_back(values[v]);
  for (auto* r : results)
    if (!r) return Internal("[lower] a graph output was never computed");
  ASSIGN_OR_RETURN(auto* root, b.Tuple(results));
  RETURN_IF_ERROR(b.Build(root, /*is_entry=*/true).status());
  return module;
}

}  // namespace lazy
}  // namespace oneflow_like
