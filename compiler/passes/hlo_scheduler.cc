#include "compiler/passes/hlo_scheduler.h"

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "compiler/library/external_calls.h"

namespace oneflow_like::hlo {
namespace {

int64_t LeafBytes(const HloShape& s) {
  if (!s.is_tuple()) return s.ByteSize();
  int64_t n = 0;
  for (auto& e : s.tuple_shapes()) n += LeafBytes(e);
  return n;
}

// The instructions whose buffers `i` keeps alive by reading it (aliases forward to the source).
void Sources(const HloInstruction* i, std::vector<const HloInstruction*>* out) {
  switch (i->opcode()) {
    case HloOpcode::kBitcast:
    case HloOpcode::kGetTupleElement: Sources(i->operand(0), out); return;
    case HloOpcode::kTuple:
      for (auto* o : i->operands()) Sources(o, out);
      return;
    default: out->push_back(i);
  }
}

}  // namespace

int64_t DefinedBytes(const HloInstruction* i) {
  switch (i->opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kBitcast:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement: return 0;
    default: return LeafBytes(i->shape());
  }
}

int64_t HloScheduler::SimulatePeak(const HloComputation& c,
                                   const std::vector<HloInstruction*>& order) {
  absl::flat_hash_map<const HloInstruction*, int64_t> last_use;
  for (size_t p = 0; p < order.size(); ++p) {
    std::vector<const HloInstruction*> src;
    for (auto* o : order[p]->operands()) Sources(o, &src);
    for (auto* s : src) last_use[s] = p;
  }
  std::vector<const HloInstruction*> root_src;
  Sources(c.root_instruction(), &root_src);
  for (auto* s : root_src) last_use[s] = order.size();
  int64_t live = 0, peak = 0;
  std::vector<std::vector<const HloInstruction*>> dies(order.size() + 1);
  for (size_t p = 0; p < order.size(); ++p) {
    auto it = last_use.find(order[p]);
    dies[it == last_use.end() ? p : it->second].push_back(order[p]);
  }
  for (size_t p = 0; p < order.size(); ++p) {
    live += DefinedBytes(order[p]);
    peak = std::max(peak, live);
    for (auto* d : dies[p]) live -= DefinedBytes(d);
  }
  return peak;
}

std::vector<HloInstruction*> HloScheduler::DfsOrder(const HloComputation& c) {
  std::vector<HloInstruction*> order;
  absl::flat_hash_set<const HloInstruction*> done;
  std::function<void(HloInstruction*)> visit = [&](HloInstruction* i) {
    if (done.contains(i)) return;
    done.insert(i);
    for (HloInstruction* o : i->operands()) visit(o);
    order.push_back(i);
  };
  for (HloInstruction* p : c.parameters()) visit(p);
  visit(c.root_instruction());
  for (HloInstruction* i : c.MakeInstructionPostOrder()) visit(i);  // dead code, if any
  return order;
}

std::vector<HloInstruction*> HloScheduler::ListOrder(const HloComputation& c) {
  std::vector<HloInstruction*> post = c.MakeInstructionPostOrder();
  absl::flat_hash_map<const HloInstruction*, int64_t> pending, remaining_users;
  for (HloInstruction* i : post) {
    absl::flat_hash_set<const HloInstruction*> ops(i->operands().begin(), i->operands().end());
    pending[i] = ops.size();
    remaining_users[i] = i->user_count();
  }
  std::vector<HloInstruction*> ready, order;
  for (HloInstruction* i : post)
    if (pending[i] == 0) ready.push_back(i);
  while (!ready.empty()) {
    // Pick the op with the best (bytes freed - bytes defined); ties keep program order.
    size_t best = 0;
    int64_t best_score = INT64_MIN;
    for (size_t k = 0; k < ready.size(); ++k) {
      HloInstruction* i = ready[k];
      int64_t freed = 0;
      absl::flat_hash_set<const HloInstruction*> ops(i->operands().begin(), i->operands().end());
      for (auto* o : ops)
        if (remaining_users[o] == 1) freed += DefinedBytes(o);
      int64_t score = freed - DefinedBytes(i);
      if (score > best_score) {
        best = k;
        best_score = score;
      }
    }
    HloInstruction* i = ready[best];
    ready.erase(ready.begin() + best);
    order.push_back(i);
    absl::flat_hash_set<const HloInstruction*> ops(i->operands().begin(), i->operands().end());
    for (auto* o : ops) --remaining_users[o];
    for (HloInstruction* u : i->users())
      if (--pending[u] == 0) ready.push_back(u);
  }
  return order;
}

std::vector<HloInstruction*> HloScheduler::HideAsyncLatency(std::vector<HloInstruction*> order) {
  auto is_call = [](const HloInstruction* i, bool (*pred)(const std::string&)) {
    return i->opcode() == HloOpcode::kCustomCall && pred(i->attrs().custom_call_target);
  };
  std::vector<HloInstruction*> starts, dones;
  for (HloInstruction* i : order) {
    if (is_call(i, IsAsyncStartTarget)) starts.push_back(i);
    if (is_call(i, IsAsyncDoneTarget)) dones.push_back(i);
  }
  if (starts.empty() && dones.empty()) return order;
  // Starts, in order, each with whatever it needs not yet placed: the first start runs as soon
  // as its operands can be computed, the next one as soon as its own can, and so on; the rest
  // follows in its previous order (an operand-closed prefix keeps the order valid).
  std::vector<HloInstruction*> placed;
  absl::flat_hash_set<const HloInstruction*> is_placed;
  for (HloInstruction* s : starts) {
    absl::flat_hash_set<const HloInstruction*> need;
    std::vector<const HloInstruction*> stack = {s};
    while (!stack.empty()) {
      const HloInstruction* i = stack.back();
      stack.pop_back();
      if (is_placed.contains(i) || !need.insert(i).second) continue;
      for (const HloInstruction* o : i->operands())
        if (o->parent() == s->parent()) stack.push_back(o);
    }
    for (HloInstruction* i : order)
      if (need.contains(i) && is_placed.insert(i).second) placed.push_back(i);
  }
  for (HloInstruction* i : order)
    if (!is_placed.contains(i)) placed.push_back(i);
  order = std::move(placed);
  // Then each done down to just before its first user (the end when none is in this
  // computation).
  auto index_of = [&order](const HloInstruction* i) {
    return static_cast<size_t>(std::find(order.begin(), order.end(), i) - order.begin());
  };
  for (HloInstruction* d : dones) {
    order.erase(order.begin() + index_of(d));
    size_t pos = order.size();
    for (HloInstruction* u : d->users()) pos = std::min(pos, index_of(u));
    order.insert(order.begin() + pos, d);
  }
  return order;
}

StatusOr<bool> HloScheduler::Run(HloModule* module) {
  for (HloComputation* c : module->MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    std::vector<std::vector<HloInstruction*>> candidates = {c->MakeInstructionPostOrder(),
                                                            DfsOrder(*c), ListOrder(*c)};
    size_t best = 0;
    int64_t best_peak = INT64_MAX;
    for (size_t k = 0; k < candidates.size(); ++k) {
      if (candidates[k].size() != static_cast<size_t>(c->instruction_count())) continue;
      int64_t peak = SimulatePeak(*c, candidates[k]);
      if (peak < best_peak) {
        best = k;
        best_peak = peak;
      }
    }
    RETURN_IF_ERROR(c->SetInstructionOrder(HideAsyncLatency(std::move(candidates[best]))));
  }
  bool changed = !module->is_scheduled();
  module->set_is_scheduled(true);
  return changed;
}

}  // namespace oneflow_like::hlo
