// oneflow_like.distributed's C++ side: the Gloo and NCCL process groups and the work handles
// their collectives return (python/oneflow_like/distributed wraps them in torch.distributed's
// API). Both groups bind the same method names, so the Python layer calls either alike.
#include <chrono>

#include "distributed/graph_collectives.h"
#include "oneflow_like/framework/op.h"
#include "distributed/process_group.h"
#include "distributed/process_group_nccl.h"
#include "distributed/tcp_store.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {

using distributed::ProcessGroupGloo;
using distributed::ProcessGroupNccl;
using distributed::ReduceOp;
using distributed::Work;
using WorkPtr = std::shared_ptr<Work>;

std::shared_ptr<ProcessGroupGloo> CreateGroup(const std::string& host, int port, int rank,
                                              int world_size, double timeout_s,
                                              bool check_signatures, bool check_every_op) {
  distributed::ProcessGroupOptions o;
  o.host = host;
  o.port = port;
  o.rank = rank;
  o.world_size = world_size;
  o.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  o.check_signatures = check_signatures;
  o.check_every_op = check_every_op;
  StatusOr<std::shared_ptr<ProcessGroupGloo>> pg;
  {
    py::gil_scoped_release nogil;
    pg = ProcessGroupGloo::Create(o);
  }
  return Unwrap(std::move(pg));
}

// A Gloo collective: with `wait` (async_op=False) it is issued and waited for in this call,
// without the GIL and under ProcessGroupGloo::CallerWaits (so it runs on this thread when it is
// ready at once), and None is returned; otherwise its Work.
template <typename F>
py::object IssueGloo(bool wait, F issue) {
  if (!wait) return py::cast(Unwrap(issue()));
  Status st;
  {
    py::gil_scoped_release nogil;
    ProcessGroupGloo::CallerWaits caller_waits;
    StatusOr<WorkPtr> work = issue();
    st = work.ok() ? (*work)->Wait() : work.status();
  }
  Check(st);
  return py::none();
}

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

std::vector<char> ToChars(const py::bytes& b) {
  std::string s = b;
  return std::vector<char>(s.begin(), s.end());
}

py::bytes ToBytes(const std::vector<char>& v) {
  return py::bytes(v.data(), v.size());
}

// Runs a blocking store call without the GIL and raises its error.
template <typename F>
auto StoreCall(F f) {
  decltype(f()) r;
  {
    py::gil_scoped_release nogil;
    r = f();
  }
  return Unwrap(std::move(r));
}

// torch.distributed.TCPStore's C++ half (python/oneflow_like/distributed/store.py wraps it):
// values cross as bytes.
void BindTcpStore(py::module_& m) {
  using distributed::TcpStore;
  py::class_<TcpStore, std::shared_ptr<TcpStore>>(m, "_TcpStore")
      .def(py::init([](const std::string& host, int port, bool is_server, double timeout_s) {
             StatusOr<std::unique_ptr<TcpStore>> s;
             {
               py::gil_scoped_release nogil;
               s = TcpStore::Create(host, port, is_server, Millis(timeout_s));
             }
             return std::shared_ptr<TcpStore>(Unwrap(std::move(s)));
           }),
           py::arg("host"), py::arg("port"), py::arg("is_server"), py::arg("timeout"))
      .def_property_readonly("host", &TcpStore::host)
      .def_property_readonly("port", &TcpStore::port)
      .def("timeout", [](TcpStore& s) { return s.timeout().count() / 1000.0; })
      .def("set_timeout", [](TcpStore& s, double seconds) { s.set_timeout(Millis(seconds)); })
      .def("set",
           [](TcpStore& s, const std::string& key, const py::bytes& value) {
             std::vector<char> v = ToChars(value);
             Status st;
             {
               py::gil_scoped_release nogil;
               st = s.Set(key, v);
             }
             Check(st);
           })
      .def("get",
           [](TcpStore& s, const std::string& key) {
             return ToBytes(StoreCall([&] { return s.Get(key); }));
           })
      .def("add", [](TcpStore& s, const std::string& key,
                     int64_t delta) { return StoreCall([&] { return s.Add(key, delta); }); })
      .def("compare_set",
           [](TcpStore& s, const std::string& key, const py::bytes& expected,
              const py::bytes& desired) {
             std::vector<char> e = ToChars(expected), d = ToChars(desired);
             return ToBytes(StoreCall([&] { return s.CompareSet(key, e, d); }));
           })
      .def("delete_key",
           [](TcpStore& s, const std::string& key) {
             return StoreCall([&] { return s.DeleteKey(key); });
           })
      .def("num_keys", [](TcpStore& s) { return StoreCall([&] { return s.NumKeys(); }); })
      .def("check",
           [](TcpStore& s, const std::vector<std::string>& keys) {
             return StoreCall([&] { return s.Check(keys); });
           })
      .def("wait", [](TcpStore& s, const std::vector<std::string>& keys, double timeout_s) {
        Status st;
        {
          py::gil_scoped_release nogil;
          st = s.Wait(keys, Millis(timeout_s));
        }
        Check(st);
      });
}

std::shared_ptr<ProcessGroupNccl> CreateNcclGroup(const std::string& host, int port, int rank,
                                                  int world_size, double timeout_s, int device) {
  distributed::ProcessGroupOptions o;
  o.host = host;
  o.port = port;
  o.rank = rank;
  o.world_size = world_size;
  o.timeout = Millis(timeout_s);
  StatusOr<std::shared_ptr<ProcessGroupNccl>> pg;
  {
    py::gil_scoped_release nogil;
    pg = ProcessGroupNccl::Create(o, device);
  }
  return Unwrap(std::move(pg));
}

void BindNccl(py::module_& m) {
  m.def("_nccl_unavailable", [] {
    py::gil_scoped_release nogil;  // the first call loads libnccl.so.2
    return ProcessGroupNccl::Unavailable();
  });
  auto in_graph = [](const char* op) {
    return Unimplemented(
        "[%s] collectives inside nn.Graph run on the gloo backend: the nccl group takes eager "
        "CUDA tensors",
        op);
  };
  py::class_<ProcessGroupNccl, std::shared_ptr<ProcessGroupNccl>>(m, "_ProcessGroupNccl")
      .def(py::init(&CreateNcclGroup), py::arg("host"), py::arg("port"), py::arg("rank"),
           py::arg("world_size"), py::arg("timeout"), py::arg("device"))
      // The NCCL half of "cpu:gloo,cuda:nccl": meets through the Gloo group's store.
      .def_static("over_gloo",
                  [](ProcessGroupGloo& gloo, int device) {
                    StatusOr<std::shared_ptr<ProcessGroupNccl>> pg;
                    {
                      py::gil_scoped_release nogil;
                      pg = ProcessGroupNccl::CreateWithStore(gloo.options(), device, gloo.store(),
                                                             "ofl/nccl/");
                    }
                    return Unwrap(std::move(pg));
                  })
      .def("rank", &ProcessGroupNccl::rank)
      .def("size", &ProcessGroupNccl::size)
      .def("device", &ProcessGroupNccl::device)
      .def("nccl_version", &ProcessGroupNccl::nccl_version)
      .def("timeout", [](ProcessGroupNccl& pg) { return pg.options().timeout.count() / 1000.0; })
      .def(
          "new_group",
          [](ProcessGroupNccl& pg, const std::vector<int>& ranks, int64_t index, double timeout_s) {
            StatusOr<std::shared_ptr<ProcessGroupNccl>> sub;
            {
              py::gil_scoped_release nogil;
              sub = pg.NewGroup(ranks, index, Millis(timeout_s));
            }
            return Unwrap(std::move(sub));
          })
      // `check` (the Gloo group's signature exchange) has no NCCL counterpart.
      .def(
          "all_reduce",
          [](ProcessGroupNccl& pg, const Tensor& t, int op, bool) {
            return Unwrap(pg.AllReduce(t, static_cast<ReduceOp>(op)));
          },
          py::arg("tensor"), py::arg("op"), py::arg("check") = true)
      .def("all_reduce_op",
           [in_graph](ProcessGroupNccl&, const Tensor&, int) { Check(in_graph("all_reduce")); })
      .def("broadcast_op",
           [in_graph](ProcessGroupNccl&, const Tensor&, int) { Check(in_graph("broadcast")); })
      .def("broadcast", [](ProcessGroupNccl& pg, const Tensor& t,
                           int root) { return Unwrap(pg.Broadcast(t, root)); })
      .def("all_gather", [](ProcessGroupNccl& pg, const TensorList& outs,
                            const Tensor& in) { return Unwrap(pg.AllGather(outs, in)); })
      .def("reduce_scatter",
           [](ProcessGroupNccl& pg, const Tensor& out, const TensorList& ins, int op) {
             return Unwrap(pg.ReduceScatter(out, ins, static_cast<ReduceOp>(op)));
           })
      // NCCL has no tags: sends and receives between two ranks pair in issue order.
      .def("send", [](ProcessGroupNccl& pg, const Tensor& t, int dst,
                      int) { return Unwrap(pg.Send(t, dst)); })
      .def("recv", [](ProcessGroupNccl& pg, const Tensor& t, int src,
                      int) { return Unwrap(pg.Recv(t, src)); })
      .def("batch_send_recv",
           [](ProcessGroupNccl& pg, const std::vector<bool>& is_send, const TensorList& tensors,
              const std::vector<int>& peers) {
             std::vector<distributed::P2POp> ops;
             for (size_t i = 0; i < is_send.size() && i < tensors.size() && i < peers.size(); ++i)
               ops.push_back({is_send[i], tensors[i], peers[i]});
             return Unwrap(pg.BatchSendRecv(ops));
           })
      .def("reduce", [](ProcessGroupNccl& pg, const Tensor& t, int root,
                        int op) { return Unwrap(pg.Reduce(t, root, static_cast<ReduceOp>(op))); })
      .def("gather", [](ProcessGroupNccl& pg, const TensorList& outs, const Tensor& in,
                        int root) { return Unwrap(pg.Gather(outs, in, root)); })
      .def("scatter", [](ProcessGroupNccl& pg, const Tensor& out, const TensorList& ins,
                         int root) { return Unwrap(pg.Scatter(out, ins, root)); })
      .def("barrier", [](ProcessGroupNccl& pg) { return Unwrap(pg.Barrier()); })
      .def("shutdown", [](ProcessGroupNccl& pg) {
        Status st;
        {
          py::gil_scoped_release nogil;
          st = pg.Shutdown();
        }
        Check(st);
      });
}

void BindDistributed(py::module_& m, TensorClass&) {
  m.def("_tracing_active", &TracingActive);
  py::class_<Work, WorkPtr>(m, "_Work")
      .def("is_completed", &Work::IsCompleted)
      .def(
          "wait",
          [](Work& w, double timeout_s) {
            Status st;
            {
              py::gil_scoped_release nogil;
              st = w.Wait(timeout_s < 0 ? -1 : static_cast<int64_t>(timeout_s * 1000));
            }
            Check(st);
            return true;
          },
          py::arg("timeout") = -1.0);

  py::class_<ProcessGroupGloo, std::shared_ptr<ProcessGroupGloo>>(m, "_ProcessGroupGloo")
      .def(py::init(&CreateGroup), py::arg("host"), py::arg("port"), py::arg("rank"),
           py::arg("world_size"), py::arg("timeout"), py::arg("check_signatures") = true,
           py::arg("check_every_op") = false)
      .def("rank", &ProcessGroupGloo::rank)
      .def("_signature_exchanges", &ProcessGroupGloo::signature_exchanges)
      .def("timeout", [](ProcessGroupGloo& pg) { return pg.options().timeout.count() / 1000.0; })
      .def(
          "new_group",
          [](ProcessGroupGloo& pg, const std::vector<int>& ranks, int64_t index, double timeout_s) {
            StatusOr<std::shared_ptr<ProcessGroupGloo>> sub;
            {
              py::gil_scoped_release nogil;
              sub = pg.NewGroup(ranks, index,
                                std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
            }
            return Unwrap(std::move(sub));
          })
      .def("size", &ProcessGroupGloo::size)
      .def(
          "all_reduce",
          [](ProcessGroupGloo& pg, const Tensor& t, int op, bool check, bool wait) {
            return IssueGloo(wait,
                             [&] { return pg.AllReduce(t, static_cast<ReduceOp>(op), check); });
          },
          py::arg("tensor"), py::arg("op"), py::arg("check") = true, py::arg("wait") = false)
      .def(
          "_time_raw_all_reduce",
          [](ProcessGroupGloo& pg, const Tensor& t, int iters) {
            StatusOr<std::vector<double>> seconds;
            {
              py::gil_scoped_release nogil;
              seconds = pg.TimeRawGlooAllReduce(t, iters);
            }
            return Unwrap(std::move(seconds));
          },
          py::arg("tensor"), py::arg("iters") = 1)
      // Inside nn.Graph tracing (or on lazy tensors): the collective as a traced op.
      .def("all_reduce_op",
           [](ProcessGroupGloo& pg, const Tensor& t, int op) {
             Check(distributed::AllReduceOp(t, pg, static_cast<ReduceOp>(op)));
           })
      .def("broadcast_op", [](ProcessGroupGloo& pg, const Tensor& t,
                              int root) { Check(distributed::BroadcastOp(t, pg, root)); })
      .def(
          "broadcast",
          [](ProcessGroupGloo& pg, const Tensor& t, int root, bool wait) {
            return IssueGloo(wait, [&] { return pg.Broadcast(t, root); });
          },
          py::arg("tensor"), py::arg("root"), py::arg("wait") = false)
      .def(
          "all_gather",
          [](ProcessGroupGloo& pg, const TensorList& outs, const Tensor& in, bool wait) {
            return IssueGloo(wait, [&] { return pg.AllGather(outs, in); });
          },
          py::arg("outputs"), py::arg("input"), py::arg("wait") = false)
      .def(
          "reduce_scatter",
          [](ProcessGroupGloo& pg, const Tensor& out, const TensorList& ins, int op, bool wait) {
            return IssueGloo(wait,
                             [&] { return pg.ReduceScatter(out, ins, static_cast<ReduceOp>(op)); });
          },
          py::arg("output"), py::arg("inputs"), py::arg("op"), py::arg("wait") = false)
      .def(
          "send",
          [](ProcessGroupGloo& pg, const Tensor& t, int dst, int tag, bool wait) {
            return IssueGloo(wait, [&] { return pg.Send(t, dst, tag); });
          },
          py::arg("tensor"), py::arg("dst"), py::arg("tag"), py::arg("wait") = false)
      .def(
          "recv",
          [](ProcessGroupGloo& pg, const Tensor& t, int src, int tag, bool wait) {
            return IssueGloo(wait, [&] { return pg.Recv(t, src, tag); });
          },
          py::arg("tensor"), py::arg("src"), py::arg("tag"), py::arg("wait") = false)
      .def(
          "reduce",
          [](ProcessGroupGloo& pg, const Tensor& t, int root, int op, bool wait) {
            return IssueGloo(wait, [&] { return pg.Reduce(t, root, static_cast<ReduceOp>(op)); });
          },
          py::arg("tensor"), py::arg("root"), py::arg("op"), py::arg("wait") = false)
      .def(
          "gather",
          [](ProcessGroupGloo& pg, const TensorList& outs, const Tensor& in, int root, bool wait) {
            return IssueGloo(wait, [&] { return pg.Gather(outs, in, root); });
          },
          py::arg("outputs"), py::arg("input"), py::arg("root"), py::arg("wait") = false)
      .def(
          "scatter",
          [](ProcessGroupGloo& pg, const Tensor& out, const TensorList& ins, int root, bool wait) {
            return IssueGloo(wait, [&] { return pg.Scatter(out, ins, root); });
          },
          py::arg("output"), py::arg("inputs"), py::arg("root"), py::arg("wait") = false)
      .def(
          "barrier",
          [](ProcessGroupGloo& pg, bool wait) {
            return IssueGloo(wait, [&] { return pg.Barrier(); });
          },
          py::arg("wait") = false)
      .def(
          "all_to_all_single",
          [](ProcessGroupGloo& pg, const Tensor& out, const Tensor& in,
             const std::vector<int64_t>& out_splits, const std::vector<int64_t>& in_splits,
             bool wait) {
            return IssueGloo(wait, [&] { return pg.AllToAll(out, in, out_splits, in_splits); });
          },
          py::arg("output"), py::arg("input"), py::arg("output_splits"), py::arg("input_splits"),
          py::arg("wait") = false)
      .def(
          "monitored_barrier",
          [](ProcessGroupGloo& pg, double timeout_s, bool wait_all_ranks, bool wait) {
            return IssueGloo(
                wait, [&] { return pg.MonitoredBarrier(Millis(timeout_s), wait_all_ranks); });
          },
          py::arg("timeout"), py::arg("wait_all_ranks") = false, py::arg("wait") = false)
      .def("shutdown", [](ProcessGroupGloo& pg) {
        Status st;
        {
          py::gil_scoped_release nogil;
          st = pg.Shutdown();
        }
        Check(st);
      });
  BindNccl(m);
  BindTcpStore(m);
}
OFL_PY_BINDING(BindDistributed);

}  // namespace
}  // namespace python
}  // namespace oneflow_like
