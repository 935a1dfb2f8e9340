// VirtualMachineEngine driven on one thread: dependence edges, barriers, release, erase, errors.
#include "vm/engine.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "vm/instruction_policies.h"
#include "vm/test_util.h"

namespace oneflow_like {
namespace vm {
namespace {

using testing::FnPolicy;
using testing::NewBlob;

class EngineTest : public ::testing::Test {
 protected:
  // Receives an instruction; returns it (still owned by the engine).
  Instruction* Add(std::string name, std::vector<BlobPtr> reads, std::vector<BlobPtr> writes,
                   FnPolicy::Fn fn = nullptr) {
    auto p = std::make_unique<FnPolicy>(name, std::move(reads), std::move(writes), std::move(fn),
                                        -1, &destroyed_);
    auto instr = std::make_unique<Instruction>(nullptr, std::move(p));
    Instruction* raw = instr.get();
    engine_.Receive(std::move(instr), &ready_);
    return raw;
  }
  Instruction* AddPolicy(std::unique_ptr<InstructionPolicy> p) {
    auto instr = std::make_unique<Instruction>(nullptr, std::move(p));
    Instruction* raw = instr.get();
    engine_.Receive(std::move(instr), &ready_);
    return raw;
  }
  bool IsReady(Instruction* i) {
    return std::find(ready_.begin(), ready_.end(), i) != ready_.end();
  }
  // Runs and retires one ready instruction (the way a stream would).
  void Run(Instruction* i) {
    ASSERT_TRUE(IsReady(i)) << i->DebugName() << " is not ready";
    ready_.erase(std::find(ready_.begin(), ready_.end(), i));
    engine_.MarkDispatched(i);
    ExecuteInstruction(i);
    engine_.MarkDone(i, &ready_);
  }
  std::vector<std::string> ReadyNames() {
    std::vector<std::string> n;
    for (auto* i : ready_) n.push_back(i->DebugName());
    std::sort(n.begin(), n.end());
    return n;
  }

  VirtualMachineEngine engine_;
  std::vector<Instruction*> ready_;
  std::atomic<int> destroyed_{0};
};

TEST_F(EngineTest, IndependentInstructionsAreReadyAtOnceInOrderOfIds) {
  auto a = NewBlob(), b = NewBlob();
  Instruction* i0 = Add("w_a", {}, {a});
  Instruction* i1 = Add("w_b", {}, {b});
  EXPECT_EQ(i0->id() + 1, i1->id());
  EXPECT_EQ(ReadyNames(), (std::vector<std::string>{"w_a", "w_b"}));
  EXPECT_EQ(i0->state(), InstructionState::kReady);
  Run(i0);
  Run(i1);
  EXPECT_EQ(engine_.num_live(), 0);
  EXPECT_EQ(engine_.num_received(), 2u);
}

TEST_F(EngineTest, ReadAfterWriteWaitsForTheWriter) {
  auto a = NewBlob();
  Instruction* w = Add("w", {}, {a}, [&] {
    testing::I64(a) = 7;
    return Status();
  });
  int64_t seen = 0;
  Instruction* r1 = Add("r1", {a}, {}, [&] {
    seen = testing::I64(a);
    return Status();
  });
  Instruction* r2 = Add("r2", {a}, {});
  EXPECT_EQ(r1->state(), InstructionState::kPending);
  EXPECT_EQ(ReadyNames(), std::vector<std::string>{"w"});
  Run(w);
  EXPECT_EQ(ReadyNames(), (std::vector<std::string>{"r1", "r2"}));  // readers run concurrently
  Run(r1);
  Run(r2);
  EXPECT_EQ(seen, 7);
  EXPECT_TRUE(a->dependence()->idle());
}

TEST_F(EngineTest, WriteAfterReadWaitsForEveryReader) {
  auto a = NewBlob();
  Instruction* w0 = Add("w0", {}, {a});
  Run(w0);
  Instruction* r1 = Add("r1", {a}, {});
  Instruction* r2 = Add("r2", {a}, {});
  Instruction* w1 = Add("w1", {}, {a});
  EXPECT_EQ(ReadyNames(), (std::vector<std::string>{"r1", "r2"}));
  Run(r2);
  EXPECT_FALSE(IsReady(w1));
  Run(r1);
  EXPECT_TRUE(IsReady(w1));
  Run(w1);
}

TEST_F(EngineTest, WriteAfterWriteKeepsProgramOrder) {
  auto a = NewBlob();
  std::vector<int> order;
  Instruction* w1 = Add("w1", {}, {a}, [&] {
    order.push_back(1);
    return Status();
  });
  Instruction* w2 = Add("w2", {}, {a}, [&] {
    order.push_back(2);
    return Status();
  });
  Instruction* w3 = Add("w3", {}, {a}, [&] {
    order.push_back(3);
    return Status();
  });
  EXPECT_EQ(ReadyNames(), std::vector<std::string>{"w1"});
  Run(w1);
  EXPECT_EQ(ReadyNames(), std::vector<std::string>{"w2"});
  Run(w2);
  Run(w3);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST_F(EngineTest, InPlaceReadWriteOfOneBlob) {
  auto a = NewBlob();
  Instruction* w = Add("init", {}, {a}, [&] {
    testing::I64(a) = 1;
    return Status();
  });
  Instruction* r = Add("reader", {a}, {});
  Instruction* inc = Add("inc_", {a}, {a}, [&] {
    testing::I64(a) += 1;
    return Status();
  });
  Instruction* after = Add("after", {a}, {});
  Run(w);
  EXPECT_EQ(ReadyNames(),
            std::vector<std::string>{"reader"});  // in-place waits for earlier readers
  Run(r);
  EXPECT_EQ(ReadyNames(), std::vector<std::string>{"inc_"});
  Run(inc);
  EXPECT_EQ(ReadyNames(), std::vector<std::string>{"after"});
  Run(after);
  EXPECT_EQ(testing::I64(a), 2);
  EXPECT_TRUE(a->dependence()->idle());
}

TEST_F(EngineTest, ReadingOneBlobTwiceLeavesNoStaleReader) {
  // Regression: `x + x` used to leave a copy of the (deleted) instruction in the reader list.
  auto a = NewBlob(), out = NewBlob();
  Run(Add("init", {}, {a}));
  Instruction* add = Add("add", {a, a}, {out});
  Run(add);
  EXPECT_TRUE(a->dependence()->idle());
  Instruction* w = Add("overwrite", {}, {a});
  EXPECT_TRUE(IsReady(w));
  Run(w);
}

TEST_F(EngineTest, BarrierOrdersAfterEveryLiveInstructionOnly) {
  auto a = NewBlob(), b = NewBlob();
  Instruction* wa = Add("wa", {}, {a});
  Instruction* wb = Add("wb", {}, {b});
  Instruction* rb = Add("rb", {b}, {});
  auto sync = std::make_shared<SyncPoint>();
  Instruction* barrier = AddPolicy(std::make_unique<BarrierInstructionPolicy>(sync));
  Instruction* later = Add("later", {}, {a});  // after the barrier in program order, on blob a
  EXPECT_FALSE(IsReady(barrier));
  Run(wa);
  EXPECT_TRUE(IsReady(later));  // ordered by blob a only; a barrier does not hold back later work
  Run(wb);
  Run(later);
  EXPECT_FALSE(IsReady(barrier));
  Run(rb);
  EXPECT_TRUE(IsReady(barrier));
  EXPECT_FALSE(sync->done.HasBeenNotified());
  Run(barrier);
  EXPECT_TRUE(sync->done.HasBeenNotified());
  EXPECT_EQ(engine_.num_live(), 0);
}

TEST_F(EngineTest, BarrierWithNothingLiveIsReadyAtOnce) {
  auto sync = std::make_shared<SyncPoint>();
  Instruction* barrier = AddPolicy(std::make_unique<BarrierInstructionPolicy>(sync));
  EXPECT_TRUE(IsReady(barrier));
  Run(barrier);
  EXPECT_TRUE(sync->Wait().ok());
}

TEST_F(EngineTest, ReleaseRunsAfterTheLastReaderAndFreesTheBlob) {
  auto a = NewBlob(1024);
  Run(Add("w", {}, {a}));
  ASSERT_NE(a->data(), nullptr);
  Instruction* r1 = Add("r1", {a}, {});
  Instruction* r2 = Add("r2", {a}, {});
  Instruction* rel = AddPolicy(std::make_unique<ReleaseTensorInstructionPolicy>(a));
  EXPECT_FALSE(IsReady(rel));
  Run(r1);
  EXPECT_FALSE(IsReady(rel));
  EXPECT_NE(a->data(), nullptr);
  Run(r2);
  EXPECT_TRUE(IsReady(rel));
  Run(rel);
  EXPECT_EQ(a->data(), nullptr);
  EXPECT_TRUE(a->dependence()->idle());
}

TEST_F(EngineTest, DoneInstructionsAreErasedAndTheirPoliciesDestroyed) {
  auto a = NewBlob();
  Instruction* w = Add("w", {}, {a});
  Instruction* r = Add("r", {a}, {});
  EXPECT_EQ(engine_.num_live(), 2);
  Run(w);
  EXPECT_EQ(engine_.num_live(), 1);
  EXPECT_EQ(destroyed_.load(), 1);
  EXPECT_EQ(a->dependence()->last_writer, nullptr);
  EXPECT_EQ(a->dependence()->readers.size(), 1u);
  Run(r);
  EXPECT_EQ(engine_.num_live(), 0);
  EXPECT_EQ(destroyed_.load(), 2);
  EXPECT_TRUE(a->dependence()->idle());
}

TEST_F(EngineTest, RetireHandsTheInstructionBack) {
  auto a = NewBlob();
  Instruction* w = Add("w", {}, {a});
  ready_.clear();
  std::unique_ptr<Instruction> taken = engine_.Retire(w, &ready_);
  EXPECT_EQ(taken.get(), w);
  EXPECT_EQ(taken->state(), InstructionState::kDone);
  EXPECT_EQ(destroyed_.load(), 0);
  taken.reset();
  EXPECT_EQ(destroyed_.load(), 1);
}

TEST_F(EngineTest, FailedWriterMarksItsOutputsAndReadersPropagate) {
  auto a = NewBlob(), b = NewBlob(), c = NewBlob();
  Instruction* bad = Add("bad_op", {}, {a}, [] { return InvalidArgument("index 9 out of range"); });
  Instruction* good = Add("good_op", {}, {c}, [&] {
    testing::I64(c) = 3;
    return Status();
  });
  bool downstream_ran = false;
  Instruction* down = Add("downstream", {a}, {b}, [&] {
    downstream_ran = true;
    return Status();
  });
  Run(bad);
  Run(good);
  EXPECT_TRUE(a->dependence()->has_error());
  EXPECT_FALSE(c->dependence()->has_error());
  Run(down);
  EXPECT_FALSE(downstream_ran);  // skipped, error propagated unchanged
  EXPECT_TRUE(b->dependence()->has_error());
  std::string msg(b->dependence()->error().message());
  EXPECT_NE(msg.find("[bad_op] index 9 out of range"), std::string::npos) << msg;
  EXPECT_EQ(b->dependence()->error().code(), absl::StatusCode::kInvalidArgument);
  // A clean overwrite heals the blob; an in-place update of a failed blob does not.
  Instruction* inplace = Add("inplace", {b}, {b});
  Run(inplace);
  EXPECT_TRUE(b->dependence()->has_error());
  Run(Add("overwrite", {}, {b}));
  EXPECT_FALSE(b->dependence()->has_error());
}

TEST_F(EngineTest, ExceptionBecomesAnInternalErrorNamingTheInstruction) {
  auto a = NewBlob();
  Instruction* t =
      Add("throwing_op", {}, {a}, []() -> Status { throw std::runtime_error("boom"); });
  ready_.erase(std::find(ready_.begin(), ready_.end(), t));
  ExecuteInstruction(t);
  EXPECT_EQ(t->status().code(), absl::StatusCode::kInternal);
  std::string msg(t->status().message());
  EXPECT_NE(msg.find("[throwing_op] exception: boom"), std::string::npos) << msg;
  engine_.MarkDone(t, &ready_);
  EXPECT_TRUE(a->dependence()->has_error());
}

}  // namespace
}  // namespace vm
}  // namespace oneflow_like
