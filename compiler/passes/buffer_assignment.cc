#include "compiler/passes/buffer_assignment.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace oneflow_like::hlo {

int64_t LeafCount(const HloShape& s) {
  if (!s.is_tuple()) return 1;
  int64_t n = 0;
  for (auto& e : s.tuple_shapes()) n += LeafCount(e);
  return n;
}

namespace {

void LeafShapes(const HloShape& s, std::vector<HloShape>* out) {
  if (!s.is_tuple()) {
    out->push_back(s);
    return;
  }
  for (auto& e : s.tuple_shapes()) LeafShapes(e, out);
}

int64_t Align(int64_t n) {
  return (n + BufferAssignment::kAlignment - 1) / BufferAssignment::kAlignment *
         BufferAssignment::kAlignment;
}

struct Buffer {
  BufferAllocation::Kind kind = BufferAllocation::Kind::kTemp;
  int64_t size = 0;
  int64_t start = 0, end = 0;  // live range in its computation's schedule
  int64_t offset = 0;          // temp: offset inside its region
  int64_t base = -1;           // temp of a nested computation: the region buffer it sits in
  int64_t param = -1, output = -1;
  const HloInstruction* inst = nullptr;
  int64_t leaf = 0;
  std::string comp;
};

}  // namespace

class BufferAssigner {
 public:
  StatusOr<std::unique_ptr<BufferAssignment>> Run(const HloModule& m);

 private:
  // Assigns `c` (its parameter leaves given for nested computations); returns its region size.
  StatusOr<int64_t> AssignComputation(const HloComputation* c,
                                      const std::vector<int64_t>& param_leaves, bool is_entry,
                                      int64_t* lower_bound);
  int64_t NewBuffer(BufferAllocation::Kind kind, const HloInstruction* i, int64_t leaf,
                    int64_t size, int64_t pos) {
    Buffer b;
    b.kind = kind;
    b.inst = i;
    b.leaf = leaf;
    b.size = size;
    b.start = b.end = pos;
    b.comp = i->parent()->name();
    buffers_.push_back(b);
    return buffers_.size() - 1;
  }
  int64_t Pack(const std::vector<int64_t>& ids);

  std::vector<Buffer> buffers_;
  absl::flat_hash_map<const HloInstruction*, std::vector<int64_t>> leaves_;
};

int64_t BufferAssigner::Pack(const std::vector<int64_t>& ids) {
  std::vector<int64_t> order = ids;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return buffers_[a].size > buffers_[b].size; });
  std::vector<int64_t> placed;
  int64_t region = 0;
  for (int64_t id : order) {
    Buffer& b = buffers_[id];
    const int64_t need = Align(b.size);
    std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end) of overlapping live ranges
    for (int64_t p : placed) {
      const Buffer& o = buffers_[p];
      if (o.start <= b.end && b.start <= o.end)
        busy.push_back({o.offset, o.offset + Align(o.size)});
    }
    std::sort(busy.begin(), busy.end());
    int64_t cursor = 0, best = -1, best_gap = INT64_MAX;
    for (auto& [lo, hi] : busy) {
      if (lo - cursor >= need && lo - cursor < best_gap) {
        best = cursor;
        best_gap = lo - cursor;
      }
      cursor = std::max(cursor, hi);
    }
    b.offset = best >= 0 ? best : cursor;
    region = std::max(region, b.offset + need);
    placed.push_back(id);
  }
  return region;
}

StatusOr<int64_t> BufferAssigner::AssignComputation(const HloComputation* c,
                                                    const std::vector<int64_t>& param_leaves,
                                                    bool is_entry, int64_t* lower_bound) {
  using Kind = BufferAllocation::Kind;
  std::vector<HloInstruction*> order = c->MakeInstructionPostOrder();
  std::vector<int64_t> temps;
  const int64_t first = buffers_.size();
  std::vector<std::pair<int64_t, std::vector<const HloComputation*>>>
      nested;  // region buffer -> comps
  auto defines_temps = [&](const HloInstruction* i, int64_t pos) {
    std::vector<HloShape> shapes;
    LeafShapes(i->shape(), &shapes);
    std::vector<int64_t> ids;
    for (size_t k = 0; k < shapes.size(); ++k) {
      ids.push_back(NewBuffer(Kind::kTemp, i, k, shapes[k].ByteSize(), pos));
      temps.push_back(ids.back());
    }
    return ids;
  };
  for (int64_t pos = 0; pos < static_cast<int64_t>(order.size()); ++pos) {
    const HloInstruction* i = order[pos];
    std::vector<int64_t>& leaves = leaves_[i];
    switch (i->opcode()) {
      case HloOpcode::kParameter:
        if (is_entry) {
          if (i->shape().is_tuple())
            return Unimplemented("[buffer-assignment] tuple entry parameters are not supported");
          leaves = {NewBuffer(Kind::kParameter, i, 0, i->shape().ByteSize(), pos)};
          buffers_[leaves[0]].param = i->parameter_number();
        } else {
          leaves = param_leaves;
        }
        break;
      case HloOpcode::kConstant:
        leaves = {NewBuffer(Kind::kConstant, i, 0, i->shape().ByteSize(), pos)};
        break;
      case HloOpcode::kBitcast: leaves = leaves_.at(i->operand(0)); break;
      case HloOpcode::kTuple:
        for (auto* o : i->operands()) {
          const auto& l = leaves_.at(o);
          leaves.insert(leaves.end(), l.begin(), l.end());
        }
        break;
      case HloOpcode::kGetTupleElement: {
        const HloShape& t = i->operand(0)->shape();
        int64_t begin = 0;
        for (int64_t k = 0; k < i->tuple_index(); ++k) begin += LeafCount(t.tuple_shape(k));
        const auto& l = leaves_.at(i->operand(0));
        leaves.assign(l.begin() + begin, l.begin() + begin + LeafCount(i->shape()));
        break;
      }
      case HloOpcode::kWhile:
      case HloOpcode::kConditional: {
        leaves = defines_temps(i, pos);
        int64_t region = 0, ignored = 0;
        std::vector<const HloComputation*> comps;
        for (const HloComputation* callee : i->called_computations()) {
          std::vector<int64_t> args = leaves;
          if (i->opcode() == HloOpcode::kConditional) {
            size_t b = std::find(i->called_computations().begin(), i->called_computations().end(),
                                 callee) -
                       i->called_computations().begin();
            args = leaves_.at(i->operand(b + 1));
          }
          ASSIGN_OR_RETURN(int64_t size, AssignComputation(callee, args, false, &ignored));
          region = std::max(region, size);
          comps.push_back(callee);
        }
        int64_t r = NewBuffer(Kind::kTemp, i, -1, region, pos);
        temps.push_back(r);
        nested.push_back({r, comps});
        break;
      }
      default: leaves = defines_temps(i, pos); break;
    }
    for (const HloInstruction* o : i->operands())
      for (int64_t b : leaves_.at(o)) buffers_[b].end = std::max(buffers_[b].end, pos);
  }
  const int64_t n = order.size();
  for (int64_t b : leaves_.at(c->root_instruction())) buffers_[b].end = n;
  if (is_entry) {  // root leaves are the caller's output buffers
    const auto& out = leaves_.at(c->root_instruction());
    for (size_t k = 0; k < out.size(); ++k) {
      Buffer& b = buffers_[out[k]];
      if (b.kind != Kind::kTemp || b.output >= 0)
        return Internal(
            "[buffer-assignment] output %d aliases a parameter, constant or another output (run "
            "copy insertion)",
            static_cast<int64_t>(k));
      b.kind = Kind::kOutput;
      b.output = k;
    }
    temps.erase(std::remove_if(temps.begin(), temps.end(),
                               [&](int64_t t) { return buffers_[t].kind != Kind::kTemp; }),
                temps.end());
  }
  int64_t region = Pack(temps);
  // Nested temps sit inside their region buffer.
  for (auto& [r, comps] : nested) {
    for (size_t b = first; b < buffers_.size(); ++b) {
      if (buffers_[b].kind != Kind::kTemp || buffers_[b].base >= 0 || b == static_cast<size_t>(r))
        continue;
      const HloComputation* owner = buffers_[b].inst->parent();
      if (std::find(comps.begin(), comps.end(), owner) != comps.end()) buffers_[b].base = r;
    }
  }
  for (int64_t pos = 0; pos <= n; ++pos) {
    int64_t live = 0;
    for (int64_t t : temps)
      if (buffers_[t].start <= pos && pos <= buffers_[t].end) live += Align(buffers_[t].size);
    *lower_bound = std::max(*lower_bound, live);
  }
  return region;
}

StatusOr<std::unique_ptr<BufferAssignment>> BufferAssigner::Run(const HloModule& m) {
  if (!m.is_scheduled())
    return absl::FailedPreconditionError("[buffer-assignment] module is not scheduled");
  auto a = std::make_unique<BufferAssignment>();
  a->module_name_ = m.name();
  int64_t lower = 0;
  ASSIGN_OR_RETURN(int64_t arena, AssignComputation(m.entry_computation(), {}, true, &lower));
  a->temp_bytes_ = arena;
  a->lower_bound_bytes_ = lower;
  using Kind = BufferAllocation::Kind;
  a->allocations_.push_back({0, Kind::kTemp, arena});
  std::vector<int64_t> alloc_of(buffers_.size(), 0);
  for (size_t b = 0; b < buffers_.size(); ++b) {
    Buffer& buf = buffers_[b];
    if (buf.kind == Kind::kTemp) continue;
    BufferAllocation alloc;
    alloc.index = a->allocations_.size();
    alloc.kind = buf.kind;
    alloc.size = buf.size;
    alloc.parameter_number = buf.param;
    alloc.output_index = buf.output;
    if (buf.kind == Kind::kConstant) alloc.constant = buf.inst;
    alloc_of[b] = alloc.index;
    a->allocations_.push_back(alloc);
  }
  auto final_offset = [&](int64_t b) {
    int64_t off = 0;
    for (int64_t x = b; x >= 0; x = buffers_[x].base) off += buffers_[x].offset;
    return off;
  };
  for (auto& [inst, ids] : leaves_) {
    std::vector<BufferSlice>& slices = a->leaves_[inst];
    for (int64_t b : ids) {
      const Buffer& buf = buffers_[b];
      slices.push_back({alloc_of[b], buf.kind == Kind::kTemp ? final_offset(b) : 0, buf.size});
    }
  }
  for (size_t b = 0; b < buffers_.size(); ++b) {
    const Buffer& buf = buffers_[b];
    a->value_lines_.push_back(absl::StrFormat(
        "  %%%s{%d} in %%%s: allocation %d offset %d size %d live [%d, %d]%s", buf.inst->name(),
        buf.leaf, buf.comp, alloc_of[b], buf.kind == Kind::kTemp ? final_offset(b) : 0, buf.size,
        buf.start, buf.end, buf.leaf < 0 ? " (region for called computations)" : ""));
  }
  return a;
}

StatusOr<std::unique_ptr<BufferAssignment>> AssignBuffers(const HloModule& module) {
  BufferAssigner assigner;
  return assigner.Run(module);
}

const std::vector<BufferSlice>& BufferAssignment::Leaves(const HloInstruction* inst) const {
  static const std::vector<BufferSlice> kEmpty;
  auto it = leaves_.find(inst);
  return it == leaves_.end() ? kEmpty : it->second;
}

StatusOr<BufferSlice> BufferAssignment::Slice(const HloInstruction* inst) const {
  const auto& l = Leaves(inst);
  if (l.size() != 1)
    return Internal("[buffer-assignment] %s has %d leaves, not one", inst->name(),
                    static_cast<int64_t>(l.size()));
  return l[0];
}

int64_t BufferAssignment::total_bytes() const {
  int64_t n = 0;
  for (auto& a : allocations_) n += a.size;
  return n;
}

std::string BufferSlice::ToString() const {
  return absl::StrFormat("{alloc %d, offset %d, size %d}", allocation, offset, size);
}

std::string BufferAssignment::ToString() const {
  static const char* kKinds[] = {"temp arena", "parameter", "output", "constant"};
  std::string s = absl::StrFormat("BufferAssignment for module %s\n", module_name_);
  for (const BufferAllocation& a : allocations_) {
    absl::StrAppendFormat(
        &s, "allocation %d: %s%s, %d bytes\n", a.index, kKinds[static_cast<int>(a.kind)],
        a.kind == BufferAllocation::Kind::kParameter ? absl::StrCat(" ", a.parameter_number)
        : a.kind == BufferAllocation::Kind::kOutput  ? absl::StrCat(" ", a.output_index)
        : a.constant                                 ? absl::StrCat(" %", a.constant->name())
                                                     : "",
        a.size);
  }
  absl::StrAppend(&s, "values:\n", absl::StrJoin(value_lines_, "\n"), "\n");
  absl::StrAppendFormat(&s,
                        "total bytes: %d\ntemp arena (simulated peak): %d bytes\nlower bound "
                        "(largest live set): %d bytes\n",
                        total_bytes(), temp_bytes_, lower_bound_bytes_);
  return s;
}

}  // namespace oneflow_like::hlo
