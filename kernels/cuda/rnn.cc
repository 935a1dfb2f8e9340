// CUDA kernels of the fused recurrent cells (same op names, inputs and dtypes as
// kernels/cpu/rnn.cc): lstm_cell_fused(+_grad), gru_cell_fused(+_grad).
#include "kernels/cuda/kernel_util.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;

// Inputs and outputs as raw pointers, for the launchers.
std::vector<const void*> Ins(KernelContext& ctx) {
  std::vector<const void*> v;
  for (int i = 0; i < ctx.num_inputs(); ++i) v.push_back(ctx.input(i).data);
  return v;
}
std::vector<void*> Outs(KernelContext& ctx, int n) {
  std::vector<void*> v;
  for (int i = 0; i < n; ++i) v.push_back(ctx.output(i).data);
  return v;
}

// `state` is the input holding the [B, H] state (c for LSTM, h for GRU).
template <bool kLstm, bool kGrad>
Status Cell(KernelContext& ctx) {
  const int state = kLstm ? (kGrad ? 3 : 1) : (kGrad ? 3 : 2);
  const auto& s = ctx.input(state);
  RETURN_IF_ERROR(CheckNnFloat(ctx.op(), s.dtype));
  int64_t B = s.shape[0], H = s.shape[1];
  int nout = kLstm ? 2 : (kGrad ? 3 : 1);
  auto launch = kLstm ? LaunchLstmCell : LaunchGruCell;
  return Launched(ctx.op(), launch(ToScalarType(s.dtype), kGrad, B, H, Ins(ctx), Outs(ctx, nout),
                                   StreamOf(ctx)));
}

Status LstmCell(KernelContext& ctx) {
  return Cell<true, false>(ctx);
}
Status LstmCellGrad(KernelContext& ctx) {
  return Cell<true, true>(ctx);
}
Status GruCell(KernelContext& ctx) {
  return Cell<false, false>(ctx);
}
Status GruCellGrad(KernelContext& ctx) {
  return Cell<false, true>(ctx);
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(lstm_cell_fused, LstmCell);
OFL_REGISTER_CUDA_KERNEL(lstm_cell_fused_grad, LstmCellGrad);
OFL_REGISTER_CUDA_KERNEL(gru_cell_fused, GruCell);
OFL_REGISTER_CUDA_KERNEL(gru_cell_fused_grad, GruCellGrad);

}  // namespace cuda
}  // namespace oneflow_like
