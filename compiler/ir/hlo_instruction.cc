#include "compiler/ir/hlo_instruction.h"

#include <algorithm>

#include "compiler/ir/hlo_computation.h"

namespace oneflow_like::hlo {

bool HloAttrs::operator==(const HloAttrs& o) const {
  auto slice_eq = [](const std::vector<SliceDim>& a, const std::vector<SliceDim>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].start != b[i].start || a[i].limit != b[i].limit || a[i].stride != b[i].stride)
        return false;
    return true;
  };
  auto pad_eq = [](const std::vector<PadDim>& a, const std::vector<PadDim>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].lo != b[i].lo || a[i].hi != b[i].hi || a[i].interior != b[i].interior) return false;
    return true;
  };
  return dimensions == o.dimensions && slice_eq(slice, o.slice) && pad_eq(padding, o.padding) &&
         dot == o.dot && window == o.window && conv == o.conv &&
         feature_group_count == o.feature_group_count && gather == o.gather &&
         scatter == o.scatter && slice_sizes == o.slice_sizes && direction == o.direction &&
         index == o.index && custom_call_target == o.custom_call_target &&
         backend_config == o.backend_config && fusion_kind == o.fusion_kind &&
         reduce_kind == o.reduce_kind && distribution == o.distribution;
}

std::unique_ptr<HloInstruction> HloInstruction::Create(HloOpcode op, HloShape shape,
                                                       std::vector<HloInstruction*> operands) {
  std::unique_ptr<HloInstruction> inst(new HloInstruction(op, std::move(shape)));
  for (HloInstruction* o : operands) inst->AppendOperand(o);
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateParameter(int64_t number, HloShape shape,
                                                                std::string name) {
  auto inst = Create(HloOpcode::kParameter, std::move(shape), {});
  inst->attrs_.index = number;
  inst->name_ = std::move(name);
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateConstant(Literal literal) {
  auto inst = Create(HloOpcode::kConstant, literal.shape, {});
  inst->literal_ = std::move(literal);
  return inst;
}

void HloInstruction::AddUser(HloInstruction* u) {
  if (std::find(users_.begin(), users_.end(), u) == users_.end()) users_.push_back(u);
}

void HloInstruction::RemoveUser(HloInstruction* u) {
  auto it = std::find(users_.begin(), users_.end(), u);
  if (it != users_.end()) users_.erase(it);
}

void HloInstruction::AppendOperand(HloInstruction* op) {
  operands_.push_back(op);
  op->AddUser(this);
}

void HloInstruction::ReplaceOperand(int64_t i, HloInstruction* new_op) {
  HloInstruction* old = operands_[i];
  operands_[i] = new_op;
  new_op->AddUser(this);
  if (std::find(operands_.begin(), operands_.end(), old) == operands_.end()) old->RemoveUser(this);
}

void HloInstruction::ReplaceOperandWith(HloInstruction* old_op, HloInstruction* new_op) {
  for (int64_t i = 0; i < operand_count(); ++i) {
    if (operands_[i] == old_op) ReplaceOperand(i, new_op);
  }
}

void HloInstruction::RemoveOperand(int64_t i) {
  HloInstruction* old = operands_[i];
  operands_.erase(operands_.begin() + i);
  if (std::find(operands_.begin(), operands_.end(), old) == operands_.end()) old->RemoveUser(this);
}

void HloInstruction::DetachOperands() {
  for (HloInstruction* o : operands_) o->RemoveUser(this);
  operands_.clear();
}

Status HloInstruction::ReplaceAllUsesWith(HloInstruction* other) {
  if (other == this) return absl::OkStatus();
  std::vector<HloInstruction*> users = users_;
  for (HloInstruction* u : users) {
    if (u == other) continue;  // e.g. other = f(this): keep its edge
    u->ReplaceOperandWith(this, other);
  }
  if (parent_ != nullptr && parent_->root_instruction() == this)
    parent_->set_root_instruction(other);
  return absl::OkStatus();
}

std::unique_ptr<HloInstruction> HloInstruction::CloneWithNewOperands(
    const HloShape& shape, std::vector<HloInstruction*> operands) const {
  auto inst = Create(opcode_, shape, std::move(operands));
  inst->attrs_ = attrs_;
  inst->literal_ = literal_;
  inst->called_ = called_;
  return inst;
}

bool HloInstruction::IdenticalIgnoringOperands(const HloInstruction& o) const {
  return opcode_ == o.opcode_ && shape_ == o.shape_ && attrs_ == o.attrs_ && called_ == o.called_ &&
         (opcode_ != HloOpcode::kConstant || literal_ == o.literal_);
}

bool HloInstruction::IsRoot() const {
  return parent_ != nullptr && parent_->root_instruction() == this;
}

ReduceKind HloInstruction::GetReduceKind() const {
  if (attrs_.reduce_kind != ReduceKind::kNone || called_.empty()) return attrs_.reduce_kind;
  const HloComputation* c = called_[0];
  const HloInstruction* r = c->root_instruction();
  if (c->num_parameters() != 2 || r->operand_count() != 2) return ReduceKind::kNone;
  bool params = (r->operand(0) == c->parameter(0) && r->operand(1) == c->parameter(1)) ||
                (r->operand(0) == c->parameter(1) && r->operand(1) == c->parameter(0));
  if (!params) return ReduceKind::kNone;
  switch (r->opcode()) {
    case HloOpcode::kAdd: return ReduceKind::kAdd;
    case HloOpcode::kMultiply: return ReduceKind::kMul;
    case HloOpcode::kMaximum: return ReduceKind::kMax;
    case HloOpcode::kMinimum: return ReduceKind::kMin;
    case HloOpcode::kAnd: return ReduceKind::kAnd;
    case HloOpcode::kOr: return ReduceKind::kOr;
    default: return ReduceKind::kNone;
  }
}

bool ConvDims::operator==(const ConvDims& o) const {
  return in_batch == o.in_batch && in_feature == o.in_feature && k_in == o.k_in &&
         k_out == o.k_out && out_batch == o.out_batch && out_feature == o.out_feature &&
         in_spatial == o.in_spatial && k_spatial == o.k_spatial && out_spatial == o.out_spatial;
}

namespace {
// One side of dim labels, e.g. "b01f": `a`/`b` are the letters of the two non-spatial dims.
std::string LabelSide(int64_t a_dim, char a, int64_t b_dim, char b, const DimVector& spatial) {
  std::string s(spatial.size() + 2, '?');
  s[a_dim] = a;
  s[b_dim] = b;
  for (size_t i = 0; i < spatial.size(); ++i) s[spatial[i]] = static_cast<char>('0' + i);
  return s;
}
Status ParseSide(const std::string& s, char a, char b, int64_t* a_dim, int64_t* b_dim,
                 DimVector* spatial) {
  *a_dim = *b_dim = -1;
  spatial->assign(s.size() >= 2 ? s.size() - 2 : 0, -1);
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == a)
      *a_dim = i;
    else if (c == b)
      *b_dim = i;
    else if (c >= '0' && c <= '9' && static_cast<size_t>(c - '0') < spatial->size())
      (*spatial)[c - '0'] = i;
    else
      return InvalidArgument("bad dim label '%c' in '%s'", c, s);
  }
  if (*a_dim < 0 || *b_dim < 0)
    return InvalidArgument("dim labels '%s' need '%c' and '%c'", s, a, b);
  for (int64_t d : *spatial)
    if (d < 0) return InvalidArgument("dim labels '%s' miss a spatial dim", s);
  return absl::OkStatus();
}
}  // namespace

std::string ConvDims::ToString() const {
  return absl::StrCat(LabelSide(in_batch, 'b', in_feature, 'f', in_spatial), "_",
                      LabelSide(k_in, 'i', k_out, 'o', k_spatial), "->",
                      LabelSide(out_batch, 'b', out_feature, 'f', out_spatial));
}

StatusOr<ConvDims> ConvDims::Parse(const std::string& labels) {
  size_t us = labels.find('_'), arrow = labels.find("->");
  if (us == std::string::npos || arrow == std::string::npos || arrow < us)
    return InvalidArgument("dim_labels '%s' is not of the form b01f_01io->b01f", labels);
  ConvDims d;
  RETURN_IF_ERROR(
      ParseSide(labels.substr(0, us), 'b', 'f', &d.in_batch, &d.in_feature, &d.in_spatial));
  RETURN_IF_ERROR(
      ParseSide(labels.substr(us + 1, arrow - us - 1), 'i', 'o', &d.k_in, &d.k_out, &d.k_spatial));
  RETURN_IF_ERROR(
      ParseSide(labels.substr(arrow + 2), 'b', 'f', &d.out_batch, &d.out_feature, &d.out_spatial));
  if (d.in_spatial.size() != d.k_spatial.size() || d.in_spatial.size() != d.out_spatial.size())
    return InvalidArgument("dim_labels '%s' disagree on the spatial rank", labels);
  return d;
}

}  // namespace oneflow_like::hlo
