#include "compiler/artifact/opset.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace oneflow_like::artifact {
namespace {

constexpr int kOpen = kOpenRange;

// Attribute lists shared by several ops.
const std::vector<OpAttr> kDims = {{"dimensions", 1, ""}};
const std::vector<OpAttr> kReduce = {{"dimensions", 1, ""}, {"to_apply", 1, ""}, {"kind", 1, ""}};

std::vector<VersionedOp> MakeTable() {
  // Add-only. A new version of an op closes the old one's range (max = last op set containing it)
  // and takes the next unused wire code; never edit an existing row otherwise.
  std::vector<VersionedOp> t = {
      {"parameter", 1, 1, 1, kOpen, {}},
      {"constant", 1, 2, 1, kOpen, {}},
      {"iota", 1, 3, 1, kOpen, {{"iota_dimension", 1, ""}}},
      {"negate", 1, 4, 1, kOpen, {}},
      {"abs", 1, 5, 1, kOpen, {}},
      {"exponential", 1, 6, 1, kOpen, {}},
      {"log", 1, 7, 1, kOpen, {}},
      {"log-plus-one", 1, 8, 1, kOpen, {}},
      {"sqrt", 1, 9, 1, kOpen, {}},
      {"rsqrt", 1, 10, 1, kOpen, {}},
      {"sine", 1, 11, 1, kOpen, {}},
      {"cosine", 1, 12, 1, kOpen, {}},
      {"tanh", 1, 13, 1, kOpen, {}},
      {"logistic", 1, 14, 1, kOpen, {}},
      {"sign", 1, 15, 1, kOpen, {}},
      {"floor", 1, 16, 1, kOpen, {}},
      {"ceil", 1, 17, 1, kOpen, {}},
      {"round-nearest-even", 1, 18, 1, kOpen, {}},
      {"not", 1, 19, 1, kOpen, {}},
      {"erf", 1, 20, 1, kOpen, {}},
      {"convert", 1, 21, 1, kOpen, {}},
      {"add", 1, 22, 1, kOpen, {}},
      {"subtract", 1, 23, 1, kOpen, {}},
      {"multiply", 1, 24, 1, kOpen, {}},
      {"divide", 1, 25, 1, kOpen, {}},
      {"remainder", 1, 26, 1, kOpen, {}},
      {"power", 1, 27, 1, kOpen, {}},
      {"maximum", 1, 28, 1, kOpen, {}},
      {"minimum", 1, 29, 1, kOpen, {}},
      {"compare", 1, 30, 1, kOpen, {{"direction", 1, ""}}},
      {"and", 1, 31, 1, kOpen, {}},
      {"or", 1, 32, 1, kOpen, {}},
      {"xor", 1, 33, 1, kOpen, {}},
      {"shift-right-logical", 1, 34, 1, kOpen, {}},
      {"select", 1, 35, 1, kOpen, {}},
      {"broadcast", 1, 36, 1, kOpen, kDims},
      {"reshape", 1, 37, 1, kOpen, {}},
      {"transpose", 1, 38, 1, kOpen, kDims},
      {"slice", 1, 39, 1, kOpen, {{"slice", 1, ""}}},
      {"concatenate", 1, 40, 1, kOpen, kDims},
      // pad_v1: edge padding only. Op-set 2 added interior padding as pad_v2 (wire 64).
      {"pad", 1, 41, 1, 1, {{"padding", 1, ""}}},
      {"reduce", 1, 42, 1, kOpen, kReduce},
      {"dot",
       1,
       43,
       1,
       kOpen,
       {{"lhs_batch_dims", 1, ""},
        {"lhs_contracting_dims", 1, ""},
        {"rhs_batch_dims", 1, ""},
        {"rhs_contracting_dims", 1, ""}}},
      // convolution_v1: no kernel (rhs) dilation. Op-set 2 added it as convolution_v2 (wire 65).
      {"convolution",
       1,
       44,
       1,
       1,
       {{"window", 1, ""}, {"dim_labels", 1, ""}, {"feature_group_count", 1, ""}}},
      {"gather",
       1,
       45,
       1,
       kOpen,
       {{"offset_dims", 1, ""},
        {"collapsed_slice_dims", 1, ""},
        {"start_index_map", 1, ""},
        {"index_vector_dim", 1, ""},
        {"slice_sizes", 1, ""}}},
      {"scatter",
       1,
       46,
       1,
       kOpen,
       {{"update_window_dims", 1, ""},
        {"inserted_window_dims", 1, ""},
        {"scatter_dims_to_operand_dims", 1, ""},
        {"index_vector_dim", 1, ""},
        {"to_apply", 1, ""},
        {"kind", 1, ""}}},
      {"dynamic-slice", 1, 47, 1, kOpen, {{"dynamic_slice_sizes", 1, ""}}},
      {"rng", 1, 48, 1, kOpen, {{"distribution", 1, ""}}},
      {"tuple", 1, 49, 1, kOpen, {}},
      {"get-tuple-element", 1, 50, 1, kOpen, {{"index", 1, ""}}},
      {"fusion", 1, 51, 1, kOpen, {{"kind", 1, ""}, {"calls", 1, ""}}},
      {"while", 1, 52, 1, kOpen, {{"condition", 1, ""}, {"body", 1, ""}}},
      {"conditional", 1, 53, 1, kOpen, {{"branch_computations", 1, ""}}},
      {"copy", 1, 54, 1, kOpen, {}},
      {"bitcast", 1, 55, 1, kOpen, {}},
  };
  // Custom-call families: the library ops (compiler/library) and the runtime's calls.
  const std::vector<OpAttr> call = {{"custom_call_target", 1, ""}, {"backend_config", 1, ""}};
  const char* families[] = {"custom-call.softmax",    "custom-call.log_softmax",
                            "custom-call.layer_norm", "custom-call.max_pool2d",
                            "custom-call.avg_pool2d", "custom-call.max_pool2d_grad",
                            "custom-call.ofl.kernel", "custom-call.ofl.view"};
  uint32_t wire = 56;
  for (const char* f : families) t.push_back({f, 1, wire++, 1, kOpen, call});
  // Op-set 2.
  t.push_back({"pad", 2, 64, 2, kOpen, {{"padding", 1, ""}, {"interior", 2, ""}}});
  t.push_back({"convolution",
               2,
               65,
               2,
               kOpen,
               {{"window", 1, ""},
                {"dim_labels", 1, ""},
                {"feature_group_count", 1, ""},
                {"rhs_dilate", 2, ""}}});
  // Op-set 3: compiler plugins' dispatch ops (bytecode + original partition in backend_config).
  t.push_back({"custom-call.ofl.plugin.dispatch", 1, 66, 3, kOpen, call});
  return t;
}

}  // namespace

std::string VersionedOp::FullName() const {
  return absl::StrCat(name, "_v", version);
}

const OpAttr* VersionedOp::FindAttr(const std::string& attr) const {
  for (const OpAttr& a : attrs) {
    if (attr == a.name) return &a;
  }
  return nullptr;
}

const std::vector<VersionedOp>& AllVersionedOps() {
  static const std::vector<VersionedOp> table = MakeTable();
  return table;
}

const VersionedOp* FindByWire(uint32_t wire) {
  for (const VersionedOp& op : AllVersionedOps()) {
    if (op.wire == wire) return &op;
  }
  return nullptr;
}

const VersionedOp* FindVersion(const std::string& name, int opset) {
  for (const VersionedOp& op : AllVersionedOps()) {
    if (name == op.name && op.InOpset(opset)) return &op;
  }
  return nullptr;
}

StatusOr<std::string> CustomCallFamily(const std::string& target) {
  std::string family = target;
  if (absl::StartsWith(target, "ofl.kernel.")) family = "ofl.kernel";
  if (absl::StartsWith(target, "ofl.view")) family = "ofl.view";
  std::string name = absl::StrCat("custom-call.", family);
  if (FindVersion(name, kCurrentOpset) == nullptr)
    return InvalidArgument("[custom-call] target '%s' is not in the versioned op set", target);
  return name;
}

std::string OpsetTableString() {
  std::string s;
  for (const VersionedOp& op : AllVersionedOps()) {
    std::vector<std::string> attrs;
    for (const OpAttr& a : op.attrs)
      attrs.push_back(absl::StrCat(a.name, "@", a.introduced, ":", a.default_value));
    absl::StrAppend(&s, op.FullName(), " wire=", op.wire, " opset=[", op.min_opset, ",",
                    op.max_opset == kOpenRange ? "current" : absl::StrCat(op.max_opset),
                    "] attrs=", absl::StrJoin(attrs, ","), "\n");
  }
  return s;
}

}  // namespace oneflow_like::artifact
