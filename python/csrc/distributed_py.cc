// oneflow_like.distributed's C++ side: the Gloo process group and the work handles its
// collectives return (python/oneflow_like/distributed wraps them in torch.distributed's API).
#include <chrono>

#include "distributed/graph_collectives.h"
#include "oneflow_like/framework/op.h"
#include "distributed/process_group.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {

using distributed::ProcessGroupGloo;
using distributed::ReduceOp;
using distributed::Work;
using WorkPtr = std::shared_ptr<Work>;

std::shared_ptr<ProcessGroupGloo> CreateGroup(const std::string& host, int port, int rank,
                                              int world_size, double timeout_s,
                                              bool check_signatures) {
  distributed::ProcessGroupOptions o;
  o.host = host;
  o.port = port;
  o.rank = rank;
  o.world_size = world_size;
  o.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  o.check_signatures = check_signatures;
  StatusOr<std::shared_ptr<ProcessGroupGloo>> pg;
  {
    py::gil_scoped_release nogil;
    pg = ProcessGroupGloo::Create(o);
  }
  return Unwrap(std::move(pg));
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
           py::arg("world_size"), py::arg("timeout"), py::arg("check_signatures") = true)
      .def("rank", &ProcessGroupGloo::rank)
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
          [](ProcessGroupGloo& pg, const Tensor& t, int op, bool check) {
            return Unwrap(pg.AllReduce(t, static_cast<ReduceOp>(op), check));
          },
          py::arg("tensor"), py::arg("op"), py::arg("check") = true)
      // Inside nn.Graph tracing (or on lazy tensors): the collective as a traced op.
      .def("all_reduce_op",
           [](ProcessGroupGloo& pg, const Tensor& t, int op) {
             Check(distributed::AllReduceOp(t, pg, static_cast<ReduceOp>(op)));
           })
      .def("broadcast_op", [](ProcessGroupGloo& pg, const Tensor& t,
                              int root) { Check(distributed::BroadcastOp(t, pg, root)); })
      .def("broadcast", [](ProcessGroupGloo& pg, const Tensor& t,
                           int root) { return Unwrap(pg.Broadcast(t, root)); })
      .def("all_gather", [](ProcessGroupGloo& pg, const TensorList& outs,
                            const Tensor& in) { return Unwrap(pg.AllGather(outs, in)); })
      .def("reduce_scatter",
           [](ProcessGroupGloo& pg, const Tensor& out, const TensorList& ins, int op) {
             return Unwrap(pg.ReduceScatter(out, ins, static_cast<ReduceOp>(op)));
           })
      .def("send", [](ProcessGroupGloo& pg, const Tensor& t, int dst,
                      int tag) { return Unwrap(pg.Send(t, dst, tag)); })
      .def("recv", [](ProcessGroupGloo& pg, const Tensor& t, int src,
                      int tag) { return Unwrap(pg.Recv(t, src, tag)); })
      .def("reduce", [](ProcessGroupGloo& pg, const Tensor& t, int root,
                        int op) { return Unwrap(pg.Reduce(t, root, static_cast<ReduceOp>(op))); })
      .def("gather", [](ProcessGroupGloo& pg, const TensorList& outs, const Tensor& in,
                        int root) { return Unwrap(pg.Gather(outs, in, root)); })
      .def("scatter", [](ProcessGroupGloo& pg, const Tensor& out, const TensorList& ins,
                         int root) { return Unwrap(pg.Scatter(out, ins, root)); })
      .def("barrier", [](ProcessGroupGloo& pg) { return Unwrap(pg.Barrier()); })
      .def("shutdown", [](ProcessGroupGloo& pg) {
        Status st;
        {
          py::gil_scoped_release nogil;
          st = pg.Shutdown();
        }
        Check(st);
      });
}
OFL_PY_BINDING(BindDistributed);

}  // namespace
}  // namespace python
}  // namespace oneflow_like
