// Textual (included twice, no include guard): the C++ signature of each signature kind of each op
// table's Python API, expanded over the tables. table_ops.h includes it to declare the functions
// (OFL_D(v) writes a default ` = v`, OFL_BODY(...) a `;`); oneflow_like/api/ops_tables.cc
// includes it to define them (OFL_D writes nothing, OFL_BODY(kind, ...) the body
// OFL_B_<kind>(...)). One macro per kind: a new table row needs no line here; a new kind needs
// one macro here and, where its body is new, one in ops_tables.cc. Argument names and order are
// libtorch's (Python's where libtorch has none); defaults are the tables' attribute structs'
// (attrs::), or PyTorch's where the argument is no attribute.
// clang-format off

// ---- binary.def: api promote / division / true_div / logical / bitwise / special -> name(a, b);
// custom (add, sub, mul, div, pow, the comparisons) is hand-written in ops.h.
#define OFL_SIG_BIN(name, Name) \
  Tensor name(const Tensor& input, const Tensor& other) \
  OFL_BODY(res, F::Name(A(input, #name), A(other, #name)))
#define OFL_SIG_BIN_promote OFL_SIG_BIN
#define OFL_SIG_BIN_division OFL_SIG_BIN
#define OFL_SIG_BIN_true_div OFL_SIG_BIN
#define OFL_SIG_BIN_logical OFL_SIG_BIN
#define OFL_SIG_BIN_bitwise OFL_SIG_BIN
#define OFL_SIG_BIN_special OFL_SIG_BIN
#define OFL_SIG_BIN_custom(name, Name)
#define OFL_ATTRS(...)
#define OFL_BINARY(name, Name, types, out, Attrs, grad, api, ...) OFL_SIG_BIN_##api(name, Name)
#define OFL_BINARY_SCALAR(...)
#include "oneflow_like/opdefs/binary.def"
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR

// ---- ternary.def: api gen -> name(x, y, z, attrs = {}); gen_ip also name_(x, y, z, attrs = {})
// in place into x; custom (where, lerp, clamp with tensor bounds) and internal: not here.
#define OFL_SIG_TER_gen(name, Name, Attrs) \
  Tensor name(const Tensor& x, const Tensor& y, const Tensor& z, \
              const attrs::Attrs& attrs OFL_D({})) \
  OFL_BODY(res, F::Name(A(x, #name), A(y, #name), A(z, #name), Internal(attrs)))
#define OFL_SIG_TER_gen_ip(name, Name, Attrs) \
  OFL_SIG_TER_gen(name, Name, Attrs) \
  Tensor& name##_(Tensor& x, const Tensor& y, const Tensor& z, \
                  const attrs::Attrs& attrs OFL_D({})) \
  OFL_BODY(inplace, x, F::Name##_(A(x, #name "_"), A(y, #name "_"), A(z, #name "_"), \
                                  Internal(attrs)))
#define OFL_SIG_TER_custom(name, Name, Attrs)
#define OFL_SIG_TER_internal(name, Name, Attrs)
#define OFL_TERNARY(name, Name, types, first, Attrs, grad, api, ...) \
  OFL_SIG_TER_##api(name, Name, Attrs)
#define OFL_TERNARY_SCALAR(...)
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR

// ---- reduce.def (OFL_REDUCE_API(pyname, sig, entry, dim_entry)). dim: the reduced dims (empty:
// every dim); dtype: the input is cast to it first.
#define OFL_SIG_RED_dims_dtype(name, entry, dim_entry) \
  Tensor name(const Tensor& input, const IntList& dim OFL_D(attrs::kReduceAttrs.dims), \
              bool keepdim OFL_D(attrs::kReduceAttrs.keepdim), \
              std::optional<Dtype> dtype OFL_D(std::nullopt)) \
  OFL_BODY(res, F::entry(WithDtype(input, dtype, #name), Dims(dim), keepdim))
#define OFL_SIG_RED_dims(name, entry, dim_entry) \
  Tensor name(const Tensor& input, const IntList& dim OFL_D(attrs::kReduceAttrs.dims), \
              bool keepdim OFL_D(attrs::kReduceAttrs.keepdim)) \
  OFL_BODY(res, F::entry(A(input, #name), Dims(dim), keepdim))
#define OFL_SIG_RED_dims_all OFL_SIG_RED_dims
#define OFL_SIG_RED_opt_dim(name, entry, dim_entry) \
  Tensor name(const Tensor& input, std::optional<int64_t> dim OFL_D(std::nullopt), \
              bool keepdim OFL_D(attrs::kReduceAttrs.keepdim)) \
  OFL_BODY(res, F::entry(A(input, #name), dim, keepdim))
#define OFL_SIG_RED_var(name, entry, dim_entry) \
  Tensor name(const Tensor& input, const IntList& dim OFL_D(attrs::kVarAttrs.dims), \
              double correction OFL_D(attrs::kVarAttrs.correction), \
              bool keepdim OFL_D(attrs::kVarAttrs.keepdim)) \
  OFL_BODY(res, F::entry(A(input, #name), Dims(dim), correction, keepdim))
#define OFL_SIG_RED_norm(name, entry, dim_entry) \
  Tensor name(const Tensor& input, double p OFL_D(attrs::kNormAttrs.p), \
              const IntList& dim OFL_D(attrs::kNormAttrs.dims), \
              bool keepdim OFL_D(attrs::kNormAttrs.keepdim)) \
  OFL_BODY(res, F::entry(A(input, #name), p, Dims(dim), keepdim))
// name(input): over every element; name(input, dim, keepdim): (values, indices) along dim.
#define OFL_SIG_RED_values_indices(name, entry, dim_entry) \
  Tensor name(const Tensor& input) OFL_BODY(res, F::entry(A(input, #name))) \
  std::pair<Tensor, Tensor> name(const Tensor& input, int64_t dim, \
                                 bool keepdim OFL_D(attrs::kReduceAttrs.keepdim)) \
  OFL_BODY(res, F::dim_entry(A(input, #name), dim, keepdim))
#define OFL_REDUCE(...)
#define OFL_REDUCE_INTERNAL(...)
#define OFL_REDUCE_API(pyname, sig, entry, dim_entry) OFL_SIG_RED_##sig(pyname, entry, dim_entry)
#include "oneflow_like/opdefs/reduce.def"
#undef OFL_REDUCE
#undef OFL_REDUCE_INTERNAL
#undef OFL_REDUCE_API

// ---- scan.def (OFL_SCAN_API(pyname, sig, entry)); (values, indices) results are pairs.
#define OFL_SIG_SCAN_dim_dtype(name, entry) \
  Tensor name(const Tensor& input, int64_t dim, std::optional<Dtype> dtype OFL_D(std::nullopt)) \
  OFL_BODY(res, F::entry(A(input, #name), dim, InDtype(dtype)))
#define OFL_SIG_SCAN_dim(name, entry) \
  Tensor name(const Tensor& input, int64_t dim) OFL_BODY(res, F::entry(A(input, #name), dim))
#define OFL_SIG_SCAN_dim_pair(name, entry) \
  std::pair<Tensor, Tensor> name(const Tensor& input, int64_t dim) \
  OFL_BODY(res, F::entry(A(input, #name), dim))
#define OFL_SIG_SCAN_sort(name, entry) \
  std::pair<Tensor, Tensor> name(const Tensor& input, int64_t dim OFL_D(attrs::kSortAttrs.dim), \
                                 bool descending OFL_D(attrs::kSortAttrs.descending)) \
  OFL_BODY(res, F::entry(A(input, #name), dim, descending))
#define OFL_SIG_SCAN_argsort(name, entry) \
  Tensor name(const Tensor& input, int64_t dim OFL_D(attrs::kSortAttrs.dim), \
              bool descending OFL_D(attrs::kSortAttrs.descending)) \
  OFL_BODY(res, F::entry(A(input, #name), dim, descending))
#define OFL_SIG_SCAN_msort(name, entry) \
  Tensor name(const Tensor& input) OFL_BODY(first, F::entry(A(input, #name), 0, false))
#define OFL_SIG_SCAN_topk(name, entry) \
  std::pair<Tensor, Tensor> name(const Tensor& input, int64_t k, \
                                 int64_t dim OFL_D(attrs::kTopkAttrs.dim), \
                                 bool largest OFL_D(attrs::kTopkAttrs.largest), \
                                 bool sorted OFL_D(true)) \
  OFL_BODY(res, F::entry(A(input, #name), k, dim, largest, sorted))
#define OFL_SIG_SCAN_kthvalue(name, entry) \
  std::pair<Tensor, Tensor> name(const Tensor& input, int64_t k, \
                                 int64_t dim OFL_D(attrs::kTopkAttrs.dim), \
                                 bool keepdim OFL_D(false)) \
  OFL_BODY(res, F::entry(A(input, #name), k, dim, keepdim))
#define OFL_SCAN(...)
#define OFL_SCAN_GRAD(...)
#define OFL_SCAN_API(pyname, sig, entry) OFL_SIG_SCAN_##sig(pyname, entry)
#include "oneflow_like/opdefs/scan.def"
#undef OFL_SCAN
#undef OFL_SCAN_GRAD
#undef OFL_SCAN_API

// ---- index.def (OFL_INDEX_API(pyname, kind, sig, entry)). kind fn_method: name(input, ...)
// returns a new tensor (F::entry); method_: name(input, ...) writes into input and returns it
// (F::entry_).
#define OFL_IDX_RET_fn_method Tensor
#define OFL_IDX_IN_fn_method const Tensor&
#define OFL_IDX_RET_method_ Tensor&
#define OFL_IDX_IN_method_ Tensor&
#define OFL_SIG_IDX_dim_index(name, kind, entry) \
  OFL_IDX_RET_##kind name(OFL_IDX_IN_##kind input, int64_t dim, const Tensor& index) \
  OFL_BODY(idx_##kind, entry, (A(input, #name), dim, A(index, #name)))
#define OFL_SIG_IDX_dim_index_src(name, kind, entry) \
  OFL_IDX_RET_##kind name(OFL_IDX_IN_##kind input, int64_t dim, const Tensor& index, \
                          const Tensor& src) \
  OFL_BODY(idx_##kind, entry, (A(input, #name), dim, A(index, #name), A(src, #name)))
#define OFL_SIG_IDX_index_add(name, kind, entry) \
  OFL_IDX_RET_##kind name(OFL_IDX_IN_##kind input, int64_t dim, const Tensor& index, \
                          const Tensor& source, double alpha OFL_D(1.0)) \
  OFL_BODY(idx_##kind, entry, (A(input, #name), dim, A(index, #name), \
                               Scaled(source, alpha, #name)))
// src a tensor (reduce "none": ScatterAttrs' default, or "add": F::<entry>Add), or a number
// (F::<entry>Value).
#define OFL_SIG_IDX_scatter(name, kind, entry) \
  OFL_IDX_RET_##kind name(OFL_IDX_IN_##kind input, int64_t dim, const Tensor& index, \
                          const Tensor& src, \
                          const std::string& reduce OFL_D(attrs::kScatterAttrs.reduce)) \
  OFL_BODY(idx_##kind##_reduce, entry, \
           (A(input, #name), dim, A(index, #name), A(src, #name)), IsAdd(reduce, #name)) \
  OFL_IDX_RET_##kind name(OFL_IDX_IN_##kind input, int64_t dim, const Tensor& index, \
                          double value) \
  OFL_BODY(idx_##kind, entry##Value, (A(input, #name), dim, A(index, #name), value))
#define OFL_SIG_IDX_mask(name, kind, entry) \
  OFL_IDX_RET_##kind name(OFL_IDX_IN_##kind input, const Tensor& mask) \
  OFL_BODY(idx_##kind, entry, (A(input, #name), A(mask, #name)))
#define OFL_SIG_IDX_mask_value(name, kind, entry) \
  OFL_IDX_RET_##kind name(OFL_IDX_IN_##kind input, const Tensor& mask, double value) \
  OFL_BODY(idx_##kind, entry, (A(input, #name), A(mask, #name), value))
#define OFL_SIG_IDX_nonzero(name, kind, entry) \
  OFL_IDX_RET_##kind name(OFL_IDX_IN_##kind input) \
  OFL_BODY(idx_##kind, entry, (A(input, #name)))
#define OFL_SIG_IDX_one_hot(name, kind, entry) \
  OFL_IDX_RET_##kind name(OFL_IDX_IN_##kind input, \
                          int64_t num_classes OFL_D(attrs::kOneHotAttrs.num_classes)) \
  OFL_BODY(idx_##kind, entry, (A(input, #name), num_classes))
// indices: one per indexed dim from the left, an undefined Tensor() is a full slice.
#define OFL_SIG_IDX_index_put(name, kind, entry) \
  OFL_IDX_RET_##kind name(OFL_IDX_IN_##kind input, const std::vector<Tensor>& indices, \
                          const Tensor& values, \
                          bool accumulate OFL_D(attrs::kIndexPutAttrs.accumulate)) \
  OFL_BODY(idx_##kind, entry, (A(input, #name), In(indices), A(values, #name), accumulate))
#define OFL_INDEX(...)
#define OFL_INDEX_API(pyname, kind, sig, entry) OFL_SIG_IDX_##sig(pyname, kind, entry)
#include "oneflow_like/opdefs/index.def"
#undef OFL_INDEX
#undef OFL_INDEX_API

// ---- shape.def (OFL_SHAPE_API(pyname, kind, sig, entry)); kinds fn and fn_method alike.
#define OFL_SIG_SHAPE_dim(name, entry) \
  Tensor name(const Tensor& input, int64_t dim) OFL_BODY(res, F::entry(A(input, #name), dim))
// dim unset: every size-1 dim.
#define OFL_SIG_SHAPE_opt_dims(name, entry) \
  Tensor name(const Tensor& input, std::optional<int64_t> dim OFL_D(std::nullopt)) \
  OFL_BODY(res, F::entry(A(input, #name), OptDims(dim)))
#define OFL_SIG_SHAPE_flatten(name, entry) \
  Tensor name(const Tensor& input, int64_t start_dim OFL_D(0), int64_t end_dim OFL_D(-1)) \
  OFL_BODY(res, F::entry(A(input, #name), start_dim, end_dim))
#define OFL_SIG_SHAPE_narrow(name, entry) \
  Tensor name(const Tensor& input, int64_t dim, int64_t start, int64_t length) \
  OFL_BODY(res, F::entry(A(input, #name), dim, start, length))
#define OFL_SIG_SHAPE_select(name, entry) \
  Tensor name(const Tensor& input, int64_t dim, int64_t index) \
  OFL_BODY(res, F::entry(A(input, #name), dim, index))
#define OFL_SIG_SHAPE_tensors(name, entry) \
  Tensor name(const std::vector<Tensor>& tensors, int64_t dim OFL_D(attrs::kCatAttrs.dim)) \
  OFL_BODY(res, F::entry(In(tensors), dim))
// An int: pieces of that size (F::<entry>Every); a list: those sizes.
#define OFL_SIG_SHAPE_split(name, entry) \
  std::vector<Tensor> name(const Tensor& input, int64_t split_size, int64_t dim OFL_D(0)) \
  OFL_BODY(res, F::entry##Every(A(input, #name), split_size, dim)) \
  std::vector<Tensor> name(const Tensor& input, const IntList& split_sizes, int64_t dim OFL_D(0)) \
  OFL_BODY(res, F::entry(A(input, #name), Dims(split_sizes), dim))
#define OFL_SIG_SHAPE_chunk(name, entry) \
  std::vector<Tensor> name(const Tensor& input, int64_t chunks, int64_t dim OFL_D(0)) \
  OFL_BODY(res, F::entry(A(input, #name), chunks, dim))
#define OFL_SIG_SHAPE_unbind(name, entry) \
  std::vector<Tensor> name(const Tensor& input, int64_t dim OFL_D(0)) \
  OFL_BODY(res, F::entry(A(input, #name), dim))
#define OFL_SIG_SHAPE_flip(name, entry) \
  Tensor name(const Tensor& input, const IntList& dims) \
  OFL_BODY(res, F::entry(A(input, #name), Dims(dims)))
// dims empty: rolls the flattened tensor.
#define OFL_SIG_SHAPE_roll(name, entry) \
  Tensor name(const Tensor& input, const IntList& shifts, const IntList& dims OFL_D(IntList{})) \
  OFL_BODY(res, F::entry(A(input, #name), Dims(shifts), Dims(dims)))
#define OFL_SIG_SHAPE_diagonal(name, entry) \
  Tensor name(const Tensor& input, int64_t diagonal OFL_D(attrs::kTrilAttrs.diagonal)) \
  OFL_BODY(res, F::entry(A(input, #name), diagonal))
// storage_offset in storage elements (unset: the input's own).
#define OFL_SIG_SHAPE_as_strided(name, entry) \
  Tensor name(const Tensor& input, const IntList& size, const IntList& stride, \
              std::optional<int64_t> storage_offset OFL_D(std::nullopt)) \
  OFL_BODY(res, F::entry(A(input, #name), InShape(size), InStrides(stride), \
                         RelativeOffset(input, storage_offset, #name)))
// pad: (before, after) pairs from the last dim; mode "constant", "reflect" or "replicate".
#define OFL_SIG_SHAPE_pad(name, entry) \
  Tensor name(const Tensor& input, const IntList& pad, \
              const std::string& mode OFL_D("constant"), \
              double value OFL_D(attrs::kPadAttrs.value)) \
  OFL_BODY(res, F::entry(A(input, #name), Dims(pad), mode, value))
#define OFL_SHAPE(...)
#define OFL_SHAPE_API(pyname, kind, sig, entry) OFL_SIG_SHAPE_##sig(pyname, entry)
#include "oneflow_like/opdefs/shape.def"
#undef OFL_SHAPE
#undef OFL_SHAPE_API

// ---- copy.def (OFL_COPY_API(pyname, sig, entry, dtype)). Python's Tensor methods, here free
// functions; as_dtype (Tensor.float(), .int(), ...) has none: its names are C++ keywords, and
// Tensor::to(Dtype) does the same.
#define OFL_SIG_COPY_self(name, entry) \
  Tensor name(const Tensor& input) OFL_BODY(res, F::entry(A(input, #name)))
#define OFL_SIG_COPY_as_dtype(name, entry)
#define OFL_SIG_COPY_type_as(name, entry) \
  Tensor name(const Tensor& input, const Tensor& other) \
  OFL_BODY(res, F::Cast(A(input, #name), A(other, #name).dtype()))
#define OFL_SIG_COPY_to(name, entry) \
  Tensor name(const Tensor& input, Device device) \
  OFL_BODY(res, F::entry(A(input, #name), In(device))) \
  Tensor name(const Tensor& input, Dtype dtype) \
  OFL_BODY(res, F::Cast(A(input, #name), In(dtype))) \
  Tensor name(const Tensor& input, Device device, Dtype dtype) \
  OFL_BODY(res, F::Cast(Check(F::entry(A(input, #name), In(device))), In(dtype)))
#define OFL_SIG_COPY_cpu(name, entry) \
  Tensor name(const Tensor& input) OFL_BODY(res, F::entry(A(input, #name), In(Device(kCPU))))
#define OFL_SIG_COPY_cuda(name, entry) \
  Tensor name(const Tensor& input, Device device OFL_D(Device(kCUDA, 0))) \
  OFL_BODY(res, F::entry(A(input, #name), In(device)))
#define OFL_SIG_COPY_copy_(name, entry) \
  Tensor& name(Tensor& input, const Tensor& src) \
  OFL_BODY(inplace, input, F::entry(A(input, #name), A(src, #name)))
#define OFL_SIG_COPY_cast(name, entry) \
  Tensor name(const Tensor& input, Dtype dtype) OFL_BODY(res, F::entry(A(input, #name), In(dtype)))
#define OFL_COPY(...)
#define OFL_COPY_API(pyname, sig, entry, dtype) OFL_SIG_COPY_##sig(pyname, entry)
#include "oneflow_like/opdefs/copy.def"
#undef OFL_COPY
#undef OFL_COPY_API

// ---- creation.def (OFL_CREATION_API(pyname, sig, entry, fill)). TensorOptions as libtorch's
// (dtype float32 unless given; arange int64; device: the options' or default_device()); *_like
// take the input's shape, dtype and device. fill: zero (FullAttrs' value) | one | arg.
#define OFL_CREATION_FILL_zero attrs::kFullAttrs.value
#define OFL_CREATION_FILL_one 1.0
#define OFL_SIG_CREATION_size(name, entry, fill) \
  Tensor name(const IntList& size, const TensorOptions& options OFL_D({})) \
  OFL_BODY(options, options, F::entry(InShape(size), OFL_CREATION_FILL_##fill, \
                                       In(options.dtype()), In(options.device())))
#define OFL_SIG_CREATION_full(name, entry, fill) \
  Tensor name(const IntList& size, double fill_value, const TensorOptions& options OFL_D({})) \
  OFL_BODY(options, options, F::entry(InShape(size), fill_value, In(options.dtype()), \
                                       In(options.device())))
#define OFL_SIG_CREATION_like(name, entry, fill) \
  Tensor name(const Tensor& input) \
  OFL_BODY(res, F::entry##Like(A(input, #name), OFL_CREATION_FILL_##fill))
#define OFL_SIG_CREATION_full_like(name, entry, fill) \
  Tensor name(const Tensor& input, double fill_value) \
  OFL_BODY(res, F::entry##Like(A(input, #name), fill_value))
// arange(end) or arange(start, end, step = ArangeAttrs' step).
#define OFL_SIG_CREATION_arange(name, entry, fill) \
  Tensor name(double end, const TensorOptions& options OFL_D(kInt64)) \
  OFL_BODY(options, options, F::entry(attrs::kArangeAttrs.start, end, attrs::kArangeAttrs.step, \
                                       In(options.dtype()), In(options.device()))) \
  Tensor name(double start, double end, double step OFL_D(attrs::kArangeAttrs.step), \
              const TensorOptions& options OFL_D(kInt64)) \
  OFL_BODY(options, options, F::entry(start, end, step, In(options.dtype()), \
                                       In(options.device())))
#define OFL_SIG_CREATION_linspace(name, entry, fill) \
  Tensor name(double start, double end, int64_t steps, const TensorOptions& options OFL_D({})) \
  OFL_BODY(options, options, F::entry(start, end, steps, In(options.dtype()), \
                                       In(options.device())))
#define OFL_SIG_CREATION_eye(name, entry, fill) \
  Tensor name(int64_t n, const TensorOptions& options OFL_D({})) \
  OFL_BODY(options, options, F::entry(n, n, In(options.dtype()), In(options.device()))) \
  Tensor name(int64_t n, int64_t m, const TensorOptions& options OFL_D({})) \
  OFL_BODY(options, options, F::entry(n, m, In(options.dtype()), In(options.device())))
#define OFL_SIG_CREATION_fill(name, entry, fill) \
  Tensor& name(Tensor& input, double value) \
  OFL_BODY(inplace, input, F::entry(A(input, #name), value))
#define OFL_SIG_CREATION_zero(name, entry, fill) \
  Tensor& name(Tensor& input) \
  OFL_BODY(inplace, input, F::entry(A(input, #name), OFL_CREATION_FILL_##fill))
#define OFL_CREATION(...)
#define OFL_CREATION_API(pyname, sig, entry, fill) OFL_SIG_CREATION_##sig(pyname, entry, fill)
#include "oneflow_like/opdefs/creation.def"
#undef OFL_CREATION
#undef OFL_CREATION_API
#undef OFL_CREATION_FILL_zero
#undef OFL_CREATION_FILL_one

// ---- random.def (OFL_RANDOM_API(pyname, sig, entry, Attrs)); TensorOptions as creation's
// (randint, randperm: int64 unless given); *_like draw in the input's shape, dtype and device.
#define OFL_SIG_RANDOM_size(name, entry, Attrs) \
  Tensor name(const IntList& size, const TensorOptions& options OFL_D({})) \
  OFL_BODY(options, options, F::entry(InShape(size), In(options.dtype()), In(options.device())))
#define OFL_SIG_RANDOM_like(name, entry, Attrs) \
  Tensor name(const Tensor& input) \
  OFL_BODY(res, F::entry(A(input, #name).shape(), A(input, #name).dtype(), \
                         A(input, #name).device()))
// randint(high, size) draws from [Attrs' low, high).
#define OFL_SIG_RANDOM_randint(name, entry, Attrs) \
  Tensor name(int64_t low, int64_t high, const IntList& size, \
              const TensorOptions& options OFL_D(kInt64)) \
  OFL_BODY(options, options, F::entry(low, high, InShape(size), In(options.dtype()), \
                                       In(options.device()))) \
  Tensor name(int64_t high, const IntList& size, const TensorOptions& options OFL_D(kInt64)) \
  OFL_BODY(options, options, F::entry(attrs::k##Attrs.low, high, InShape(size), \
                                       In(options.dtype()), In(options.device())))
#define OFL_SIG_RANDOM_randint_like(name, entry, Attrs) \
  Tensor name(const Tensor& input, int64_t low, int64_t high) \
  OFL_BODY(res, F::entry(low, high, A(input, #name).shape(), A(input, #name).dtype(), \
                         A(input, #name).device())) \
  Tensor name(const Tensor& input, int64_t high) \
  OFL_BODY(res, F::entry(attrs::k##Attrs.low, high, A(input, #name).shape(), \
                         A(input, #name).dtype(), A(input, #name).device()))
#define OFL_SIG_RANDOM_randperm(name, entry, Attrs) \
  Tensor name(int64_t n, const TensorOptions& options OFL_D(kInt64)) \
  OFL_BODY(options, options, F::entry(n, In(options.dtype()), In(options.device())))
#define OFL_SIG_RANDOM_normal(name, entry, Attrs) \
  Tensor name(double mean, double std, const IntList& size, \
              const TensorOptions& options OFL_D({})) \
  OFL_BODY(options, options, F::entry(mean, std, InShape(size), In(options.dtype()), \
                                       In(options.device())))
#define OFL_SIG_RANDOM_bernoulli(name, entry, Attrs) \
  Tensor name(const Tensor& input) OFL_BODY(res, F::entry(A(input, #name)))
#define OFL_SIG_RANDOM_fill_uniform(name, entry, Attrs) \
  Tensor& name(Tensor& input, double from OFL_D(attrs::k##Attrs.low), \
               double to OFL_D(attrs::k##Attrs.high)) \
  OFL_BODY(inplace, input, F::entry(A(input, #name), from, to))
#define OFL_SIG_RANDOM_fill_normal(name, entry, Attrs) \
  Tensor& name(Tensor& input, double mean OFL_D(attrs::k##Attrs.mean), \
               double std OFL_D(attrs::k##Attrs.std)) \
  OFL_BODY(inplace, input, F::entry(A(input, #name), mean, std))
// random_(): [Attrs' low, 2^24) for floats, [low, 2^31) otherwise; random_(to): [low, to);
// random_(from, to).
#define OFL_SIG_RANDOM_fill_random(name, entry, Attrs) \
  Tensor& name(Tensor& input) \
  OFL_BODY(inplace, input, F::entry(A(input, #name), attrs::k##Attrs.low, RandomBound(input))) \
  Tensor& name(Tensor& input, int64_t to) \
  OFL_BODY(inplace, input, F::entry(A(input, #name), attrs::k##Attrs.low, to)) \
  Tensor& name(Tensor& input, int64_t from, int64_t to) \
  OFL_BODY(inplace, input, F::entry(A(input, #name), from, to))
#define OFL_RANDOM(...)
#define OFL_RANDOM_API(pyname, sig, entry, Attrs) OFL_SIG_RANDOM_##sig(pyname, entry, Attrs)
#include "oneflow_like/opdefs/random.def"
#undef OFL_RANDOM
#undef OFL_RANDOM_API

// ---- linalg.def (OFL_LINALG_API(pyname, kind, sig, result, entry)); kinds fn_method and
// private alike (the private rows are torch.linalg's, named as the table names them).
#define OFL_LINALG_RET_tensor Tensor
#define OFL_LINALG_RET_slogdet std::pair<Tensor, Tensor>
#define OFL_LINALG_RET_eigh std::pair<Tensor, Tensor>
#define OFL_LINALG_RET_qr std::pair<Tensor, Tensor>
#define OFL_LINALG_RET_svd std::tuple<Tensor, Tensor, Tensor>
#define OFL_LINALG_RET_inv_ex std::pair<Tensor, Tensor>
#define OFL_LINALG_RET_cholesky_ex std::pair<Tensor, Tensor>
#define OFL_LINALG_RET_solve_ex std::pair<Tensor, Tensor>
#define OFL_LINALG_RET_lu_factor_ex std::tuple<Tensor, Tensor, Tensor>
#define OFL_LINALG_RET_geqrf std::pair<Tensor, Tensor>
#define OFL_LINALG_RET_ldl_factor_ex std::tuple<Tensor, Tensor, Tensor>
#define OFL_SIG_LINALG_a(name, ret, entry) \
  ret name(const Tensor& input) OFL_BODY(res, F::entry(A(input, #name)))
#define OFL_SIG_LINALG_upper(name, ret, entry) \
  ret name(const Tensor& input, bool upper OFL_D(false)) OFL_BODY(res, F::entry(A(input, #name), upper))
#define OFL_SIG_LINALG_solve(name, ret, entry) \
  ret name(const Tensor& input, const Tensor& B, bool left OFL_D(true)) \
  OFL_BODY(res, F::entry(A(input, #name), A(B, #name), left))
// mode "reduced" | "complete" | "r"; the default is LinalgQrAttrs' complete.
#define OFL_SIG_LINALG_mode(name, ret, entry) \
  ret name(const Tensor& input, \
           const std::string& mode OFL_D(attrs::kLinalgQrAttrs.complete ? "complete" : "reduced")) \
  OFL_BODY(res, F::entry(A(input, #name), mode))
#define OFL_SIG_LINALG_some(name, ret, entry) \
  ret name(const Tensor& input, bool some OFL_D(!attrs::kLinalgQrAttrs.complete)) \
  OFL_BODY(res, F::entry(A(input, #name), some ? "reduced" : "complete"))
#define OFL_SIG_LINALG_full(name, ret, entry) \
  ret name(const Tensor& input, bool full_matrices OFL_D(attrs::kLinalgSvdAttrs.full_matrices)) \
  OFL_BODY(res, F::entry(A(input, #name), full_matrices))
#define OFL_SIG_LINALG_uplo(name, ret, entry) \
  ret name(const Tensor& input, const std::string& UPLO OFL_D("L")) \
  OFL_BODY(res, F::entry(A(input, #name), UPLO))
#define OFL_SIG_LINALG_triangular(name, ret, entry) \
  ret name(const Tensor& input, const Tensor& B, bool upper OFL_D(attrs::kLinalgTriangularAttrs.upper), \
           bool left OFL_D(true), bool unitriangular OFL_D(attrs::kLinalgTriangularAttrs.unitriangular)) \
  OFL_BODY(res, F::entry(A(input, #name), A(B, #name), upper, left, unitriangular))
#define OFL_SIG_LINALG_tau(name, ret, entry) \
  ret name(const Tensor& input, const Tensor& tau) OFL_BODY(res, F::entry(A(input, #name), A(tau, #name)))
#define OFL_SIG_LINALG_ormqr(name, ret, entry) \
  ret name(const Tensor& input, const Tensor& input2, const Tensor& input3, \
           bool left OFL_D(attrs::kLinalgOrmqrAttrs.left), bool transpose OFL_D(attrs::kLinalgOrmqrAttrs.transpose)) \
  OFL_BODY(res, F::entry(A(input, #name), A(input2, #name), A(input3, #name), left, transpose))
#define OFL_SIG_LINALG_hermitian(name, ret, entry) \
  ret name(const Tensor& input, bool hermitian OFL_D(attrs::kLinalgLdlAttrs.hermitian)) \
  OFL_BODY(res, F::entry(A(input, #name), hermitian))
#define OFL_SIG_LINALG_ldl_solve(name, ret, entry) \
  ret name(const Tensor& LD, const Tensor& pivots, const Tensor& B, \
           bool hermitian OFL_D(attrs::kLinalgLdlAttrs.hermitian)) \
  OFL_BODY(res, F::entry(A(LD, #name), A(pivots, #name), A(B, #name), hermitian))
#define OFL_SIG_LINALG_pivots(name, ret, entry) \
  ret name(const Tensor& input, const Tensor& pivots) \
  OFL_BODY(res, F::entry(A(input, #name), A(pivots, #name)))
#define OFL_LINALG(...)
#define OFL_LINALG_API(pyname, kind, sig, result, entry) \
  OFL_SIG_LINALG_##sig(pyname, OFL_LINALG_RET_##result, entry)
#include "oneflow_like/opdefs/linalg.def"
#undef OFL_LINALG
#undef OFL_LINALG_API

// ---- matmul.def (OFL_MATMUL_API(pyname, kind, sig, entry)).
#define OFL_SIG_MATMUL_other(name, entry) \
  Tensor name(const Tensor& input, const Tensor& other) \
  OFL_BODY(res, F::entry(A(input, #name), A(other, #name)))
#define OFL_SIG_MATMUL_mat2(name, entry) \
  Tensor name(const Tensor& input, const Tensor& mat2) \
  OFL_BODY(res, F::entry(A(input, #name), A(mat2, #name)))
// beta * input + alpha * (mat1 @ mat2); beta's default is PyTorch's (1).
#define OFL_SIG_MATMUL_addmm(name, entry) \
  Tensor name(const Tensor& input, const Tensor& mat1, const Tensor& mat2, \
              double beta OFL_D(1.0), double alpha OFL_D(attrs::kMatmulAttrs.alpha)) \
  OFL_BODY(res, F::entry(A(input, #name), A(mat1, #name), A(mat2, #name), beta, alpha))
#define OFL_SIG_MATMUL_linear(name, entry) \
  Tensor name(const Tensor& input, const Tensor& weight, const Tensor& bias OFL_D(Tensor())) \
  OFL_BODY(res, F::entry(A(input, #name), A(weight, #name), In(bias)))
#define OFL_MATMUL(...)
#define OFL_MATMUL_API(pyname, kind, sig, entry) OFL_SIG_MATMUL_##sig(pyname, entry)
#include "oneflow_like/opdefs/matmul.def"
#undef OFL_MATMUL
#undef OFL_MATMUL_API

// ---- conv.def (OFL_CONV_API(pyname, nd, entry)): x [N, C, *], weight [K, C/groups, *].
#define OFL_CONV_API(name, nd, entry) \
  Tensor name(const Tensor& input, const Tensor& weight, const Tensor& bias OFL_D(Tensor()), \
              const IntList& stride OFL_D(attrs::kConvAttrs.stride), \
              const IntList& padding OFL_D(attrs::kConvAttrs.padding), \
              const IntList& dilation OFL_D(attrs::kConvAttrs.dilation), \
              int64_t groups OFL_D(attrs::kConvAttrs.groups)) \
  OFL_BODY(res, F::entry(A(input, #name), A(weight, #name), In(bias), \
                         ConvOptions(stride, padding, dilation, groups)))
#define OFL_CONV(...)
#define OFL_CONV_GRAD(...)
#include "oneflow_like/opdefs/conv.def"
#undef OFL_CONV
#undef OFL_CONV_GRAD
#undef OFL_CONV_API

// ---- pool.def (OFL_POOL_API(pyname, sig, entry)); stride empty: the kernel size.
#define OFL_POOL_WINDOW_ARGS \
  const Tensor& input, const IntList& kernel_size, \
  const IntList& stride OFL_D(attrs::kPoolAttrs.stride), \
  const IntList& padding OFL_D(attrs::kPoolAttrs.padding)
#define OFL_POOL_MAX_ARGS \
  OFL_POOL_WINDOW_ARGS, const IntList& dilation OFL_D(attrs::kPoolAttrs.dilation), \
  bool ceil_mode OFL_D(attrs::kPoolAttrs.ceil_mode)
#define OFL_POOL_AVG_ARGS \
  OFL_POOL_WINDOW_ARGS, bool ceil_mode OFL_D(attrs::kPoolAttrs.ceil_mode), \
  bool count_include_pad OFL_D(attrs::kPoolAttrs.count_include_pad)
// name(...) -> the pooled tensor; name##_with_indices(...) -> (values, int64 indices).
#define OFL_SIG_POOL_max_indices(name, entry) \
  Tensor name(OFL_POOL_MAX_ARGS) \
  OFL_BODY(first, F::entry(A(input, #name), \
                           MaxPoolOptions(kernel_size, stride, padding, dilation, ceil_mode))) \
  std::pair<Tensor, Tensor> name##_with_indices(OFL_POOL_MAX_ARGS) \
  OFL_BODY(res, F::entry(A(input, #name), \
                         MaxPoolOptions(kernel_size, stride, padding, dilation, ceil_mode)))
#define OFL_SIG_POOL_max(name, entry) \
  Tensor name(OFL_POOL_MAX_ARGS) \
  OFL_BODY(res, F::entry(A(input, #name), \
                         MaxPoolOptions(kernel_size, stride, padding, dilation, ceil_mode)))
// divisor_override unset: the window's size.
#define OFL_SIG_POOL_avg_divisor(name, entry) \
  Tensor name(OFL_POOL_AVG_ARGS, std::optional<int64_t> divisor_override OFL_D(std::nullopt)) \
  OFL_BODY(res, F::entry(A(input, #name), \
                         AvgPoolOptions(kernel_size, stride, padding, ceil_mode, \
                                        count_include_pad, divisor_override)))
#define OFL_SIG_POOL_avg(name, entry) \
  Tensor name(OFL_POOL_AVG_ARGS) \
  OFL_BODY(res, F::entry(A(input, #name), AvgPoolOptions(kernel_size, stride, padding, \
                                                         ceil_mode, count_include_pad)))
// output_size: one value per spatial dim (or one for all); -1 keeps the input's size.
#define OFL_SIG_POOL_adaptive(name, entry) \
  Tensor name(const Tensor& input, const IntList& output_size) \
  OFL_BODY(res, F::entry(A(input, #name), Dims(output_size)))
#define OFL_POOL(...)
#define OFL_POOL_GRAD(...)
#define OFL_POOL_API(pyname, sig, entry) OFL_SIG_POOL_##sig(pyname, entry)
#include "oneflow_like/opdefs/pool.def"
#undef OFL_POOL
#undef OFL_POOL_GRAD
#undef OFL_POOL_API
#undef OFL_POOL_WINDOW_ARGS
#undef OFL_POOL_MAX_ARGS
#undef OFL_POOL_AVG_ARGS

// ---- norm.def (OFL_NORM_API(pyname, sig, entry)); undefined weight/bias: none.
#define OFL_SIG_NORM_batch_norm(name, entry) \
  Tensor name(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, \
              const Tensor& weight OFL_D(Tensor()), const Tensor& bias OFL_D(Tensor()), \
              bool training OFL_D(attrs::kBatchNormAttrs.training), double momentum OFL_D(0.1), \
              double eps OFL_D(attrs::kBatchNormAttrs.eps)) \
  OFL_BODY(res, F::entry(A(input, #name), In(running_mean), In(running_var), In(weight), \
                         In(bias), training, momentum, eps))
#define OFL_SIG_NORM_shape_affine(name, entry) \
  Tensor name(const Tensor& input, const IntList& normalized_shape, \
              const Tensor& weight OFL_D(Tensor()), const Tensor& bias OFL_D(Tensor()), \
              double eps OFL_D(attrs::kRowNormAttrs.eps)) \
  OFL_BODY(res, F::entry(A(input, #name), Dims(normalized_shape), In(weight), In(bias), eps))
#define OFL_SIG_NORM_groups_affine(name, entry) \
  Tensor name(const Tensor& input, int64_t num_groups, const Tensor& weight OFL_D(Tensor()), \
              const Tensor& bias OFL_D(Tensor()), double eps OFL_D(attrs::kRowNormAttrs.eps)) \
  OFL_BODY(res, F::entry(A(input, #name), num_groups, In(weight), In(bias), eps))
// eps unset: the machine epsilon of input's dtype.
#define OFL_SIG_NORM_shape_weight(name, entry) \
  Tensor name(const Tensor& input, const IntList& normalized_shape, \
              const Tensor& weight OFL_D(Tensor()), \
              std::optional<double> eps OFL_D(std::nullopt)) \
  OFL_BODY(res, F::entry(A(input, #name), Dims(normalized_shape), In(weight), eps))
#define OFL_NORM(...)
#define OFL_NORM_GRAD(...)
#define OFL_NORM_API(pyname, sig, entry) OFL_SIG_NORM_##sig(pyname, entry)
#include "oneflow_like/opdefs/norm.def"
#undef OFL_NORM
#undef OFL_NORM_GRAD
#undef OFL_NORM_API

// ---- softmax.def (OFL_SOFTMAX_API(pyname, sig, entry)).
#define OFL_SIG_SOFTMAX_dim(name, entry) \
  Tensor name(const Tensor& input, int64_t dim OFL_D(attrs::kSoftmaxAttrs.dim)) \
  OFL_BODY(res, F::entry(A(input, #name), dim))
#define OFL_SOFTMAX(...)
#define OFL_SOFTMAX_GRAD(...)
#define OFL_SOFTMAX_API(pyname, sig, entry) OFL_SIG_SOFTMAX_##sig(pyname, entry)
#include "oneflow_like/opdefs/softmax.def"
#undef OFL_SOFTMAX
#undef OFL_SOFTMAX_GRAD
#undef OFL_SOFTMAX_API

// ---- loss.def (OFL_LOSS_API(pyname, sig, entry)). reduction "none" | "mean" | "sum" comes
// right after target (this API's order since its first version); the arguments after it follow
// Python's order; undefined weight / pos_weight: none.
#define OFL_LOSS_REDUCTION_ARG(Attrs) \
  const std::string& reduction OFL_D(attrs::reduction_name(attrs::k##Attrs.reduction))
#define OFL_SIG_LOSS_nll_smoothing(name, entry) \
  Tensor name(const Tensor& input, const Tensor& target, OFL_LOSS_REDUCTION_ARG(NllLossAttrs), \
              double label_smoothing OFL_D(attrs::kNllLossAttrs.label_smoothing), \
              const Tensor& weight OFL_D(Tensor()), \
              int64_t ignore_index OFL_D(attrs::kNllLossAttrs.ignore_index)) \
  OFL_BODY(res, F::entry(A(input, #name), A(target, #name), \
                         NllOptions(reduction, label_smoothing, weight, ignore_index)))
#define OFL_SIG_LOSS_nll(name, entry) \
  Tensor name(const Tensor& input, const Tensor& target, OFL_LOSS_REDUCTION_ARG(NllLossAttrs), \
              const Tensor& weight OFL_D(Tensor()), \
              int64_t ignore_index OFL_D(attrs::kNllLossAttrs.ignore_index)) \
  OFL_BODY(res, F::entry(A(input, #name), A(target, #name), \
                         NllOptions(reduction, attrs::kNllLossAttrs.label_smoothing, weight, \
                                    ignore_index)))
#define OFL_SIG_LOSS_pointwise(name, entry) \
  Tensor name(const Tensor& input, const Tensor& target, OFL_LOSS_REDUCTION_ARG(LossReductionAttrs)) \
  OFL_BODY(res, F::entry(A(input, #name), A(target, #name), reduction))
#define OFL_SIG_LOSS_logits(name, entry) \
  Tensor name(const Tensor& input, const Tensor& target, OFL_LOSS_REDUCTION_ARG(LossReductionAttrs), \
              const Tensor& weight OFL_D(Tensor()), const Tensor& pos_weight OFL_D(Tensor())) \
  OFL_BODY(res, F::entry(A(input, #name), A(target, #name), In(weight), In(pos_weight), \
                         reduction))
#define OFL_LOSS(...)
#define OFL_LOSS_GRAD(...)
#define OFL_LOSS_API(pyname, sig, entry) OFL_SIG_LOSS_##sig(pyname, entry)
#include "oneflow_like/opdefs/loss.def"
#undef OFL_LOSS
#undef OFL_LOSS_GRAD
#undef OFL_LOSS_API
#undef OFL_LOSS_REDUCTION_ARG

// ---- nn_misc.def (OFL_NN_MISC_API(pyname, sig, entry)).
// padding_idx unset: none (EmbeddingAttrs' -1); negative values count from the end.
#define OFL_SIG_NN_MISC_embedding(name, entry) \
  Tensor name(const Tensor& input, const Tensor& weight, \
              std::optional<int64_t> padding_idx OFL_D(std::nullopt)) \
  OFL_BODY(res, F::entry(A(input, #name), A(weight, #name), padding_idx))
#define OFL_SIG_NN_MISC_dropout(name, entry) \
  Tensor name(const Tensor& input, double p OFL_D(attrs::kDropoutAttrs.p), \
              bool training OFL_D(true)) \
  OFL_BODY(res, F::entry(A(input, #name), p, training))
// scale unset: 1 / sqrt(E).
#define OFL_SIG_NN_MISC_attention(name, entry) \
  Tensor name(const Tensor& query, const Tensor& key, const Tensor& value, \
              const Tensor& attn_mask OFL_D(Tensor()), double dropout_p OFL_D(0.0), \
              bool is_causal OFL_D(attrs::kAttnBiasAttrs.is_causal), \
              std::optional<double> scale OFL_D(std::nullopt), \
              bool enable_gqa OFL_D(false)) \
  OFL_BODY(res, F::entry(A(query, #name), A(key, #name), A(value, #name), In(attn_mask), \
                         dropout_p, is_causal, scale, enable_gqa))
// The fused attention: (out, logsumexp).
#define OFL_SIG_NN_MISC_flash(name, entry) \
  std::pair<Tensor, Tensor> name(const Tensor& query, const Tensor& key, const Tensor& value, \
                                 double dropout_p OFL_D(0.0), bool is_causal OFL_D(false), \
                                 std::optional<double> scale OFL_D(std::nullopt)) \
  OFL_BODY(res, F::entry(A(query, #name), A(key, #name), A(value, #name), dropout_p, is_causal, \
                         scale))
#define OFL_NN_MISC(...)
#define OFL_NN_MISC_API(pyname, sig, entry) OFL_SIG_NN_MISC_##sig(pyname, entry)
#include "oneflow_like/opdefs/nn_misc.def"
#undef OFL_NN_MISC
#undef OFL_NN_MISC_API

// ---- rnn.def (OFL_RNN_API(pyname, sig, entry)): the fused cells and the whole-sequence op, named
// as the table names them.
#define OFL_SIG_RNN_lstm(name, entry) \
  std::pair<Tensor, Tensor> name(const Tensor& gates, const Tensor& c) \
  OFL_BODY(res, F::entry(A(gates, #name), A(c, #name)))
#define OFL_SIG_RNN_gru(name, entry) \
  Tensor name(const Tensor& xw, const Tensor& gh, const Tensor& h) \
  OFL_BODY(res, F::entry(A(xw, #name), A(gh, #name), A(h, #name)))
// The whole network over a sequence (rnn.def's rnn_seq): the inputs as the table orders them.
#define OFL_SIG_RNN_seq(name, entry) \
  std::vector<Tensor> name(const std::vector<Tensor>& inputs, \
                           const attrs::RnnSeqAttrs& attrs OFL_D({})) \
  OFL_BODY(res, F::entry(In(inputs), Internal(attrs)))
#define OFL_RNN(...)
#define OFL_RNN_GRAD(...)
#define OFL_RNN_SEQ(...)
#define OFL_RNN_SEQ_GRAD(...)
#define OFL_RNN_API(pyname, sig, entry) OFL_SIG_RNN_##sig(pyname, entry)
#include "oneflow_like/opdefs/rnn.def"
#undef OFL_RNN
#undef OFL_RNN_GRAD
#undef OFL_RNN_SEQ
#undef OFL_RNN_SEQ_GRAD
#undef OFL_RNN_API

#undef OFL_ATTRS
// The tables' own helper macros.
#undef OFL_INDEX_TARGET
#undef OFL_INDEX_SCATTER
#undef OFL_INDEX_PUT
#undef OFL_CONV_FIELDS
// The signature macros (generated list).
#undef OFL_SIG_BIN
#undef OFL_SIG_BIN_promote
#undef OFL_SIG_BIN_division
#undef OFL_SIG_BIN_true_div
#undef OFL_SIG_BIN_logical
#undef OFL_SIG_BIN_bitwise
#undef OFL_SIG_BIN_special
#undef OFL_SIG_BIN_custom
#undef OFL_SIG_TER_gen
#undef OFL_SIG_TER_gen_ip
#undef OFL_SIG_TER_custom
#undef OFL_SIG_TER_internal
#undef OFL_SIG_RED_dims_dtype
#undef OFL_SIG_RED_dims
#undef OFL_SIG_RED_dims_all
#undef OFL_SIG_RED_opt_dim
#undef OFL_SIG_RED_var
#undef OFL_SIG_RED_norm
#undef OFL_SIG_RED_values_indices
#undef OFL_SIG_SCAN_dim_dtype
#undef OFL_SIG_SCAN_dim
#undef OFL_SIG_SCAN_dim_pair
#undef OFL_SIG_SCAN_sort
#undef OFL_SIG_SCAN_argsort
#undef OFL_SIG_SCAN_msort
#undef OFL_SIG_SCAN_topk
#undef OFL_SIG_SCAN_kthvalue
#undef OFL_IDX_RET_fn_method
#undef OFL_IDX_IN_fn_method
#undef OFL_IDX_RET_method_
#undef OFL_IDX_IN_method_
#undef OFL_SIG_IDX_dim_index
#undef OFL_SIG_IDX_dim_index_src
#undef OFL_SIG_IDX_index_add
#undef OFL_SIG_IDX_scatter
#undef OFL_SIG_IDX_mask
#undef OFL_SIG_IDX_mask_value
#undef OFL_SIG_IDX_nonzero
#undef OFL_SIG_IDX_one_hot
#undef OFL_SIG_IDX_index_put
#undef OFL_SIG_SHAPE_dim
#undef OFL_SIG_SHAPE_opt_dims
#undef OFL_SIG_SHAPE_flatten
#undef OFL_SIG_SHAPE_narrow
#undef OFL_SIG_SHAPE_select
#undef OFL_SIG_SHAPE_tensors
#undef OFL_SIG_SHAPE_split
#undef OFL_SIG_SHAPE_chunk
#undef OFL_SIG_SHAPE_unbind
#undef OFL_SIG_SHAPE_flip
#undef OFL_SIG_SHAPE_roll
#undef OFL_SIG_SHAPE_diagonal
#undef OFL_SIG_SHAPE_as_strided
#undef OFL_SIG_SHAPE_pad
#undef OFL_SIG_COPY_self
#undef OFL_SIG_COPY_as_dtype
#undef OFL_SIG_COPY_type_as
#undef OFL_SIG_COPY_to
#undef OFL_SIG_COPY_cpu
#undef OFL_SIG_COPY_cuda
#undef OFL_SIG_COPY_copy_
#undef OFL_SIG_COPY_cast
#undef OFL_SIG_CREATION_size
#undef OFL_SIG_CREATION_full
#undef OFL_SIG_CREATION_like
#undef OFL_SIG_CREATION_full_like
#undef OFL_SIG_CREATION_arange
#undef OFL_SIG_CREATION_linspace
#undef OFL_SIG_CREATION_eye
#undef OFL_SIG_CREATION_fill
#undef OFL_SIG_CREATION_zero
#undef OFL_SIG_RANDOM_size
#undef OFL_SIG_RANDOM_like
#undef OFL_SIG_RANDOM_randint
#undef OFL_SIG_RANDOM_randint_like
#undef OFL_SIG_RANDOM_randperm
#undef OFL_SIG_RANDOM_normal
#undef OFL_SIG_RANDOM_bernoulli
#undef OFL_SIG_RANDOM_fill_uniform
#undef OFL_SIG_RANDOM_fill_normal
#undef OFL_SIG_RANDOM_fill_random
#undef OFL_LINALG_RET_tensor
#undef OFL_LINALG_RET_slogdet
#undef OFL_LINALG_RET_eigh
#undef OFL_LINALG_RET_qr
#undef OFL_LINALG_RET_svd
#undef OFL_LINALG_RET_inv_ex
#undef OFL_LINALG_RET_cholesky_ex
#undef OFL_LINALG_RET_solve_ex
#undef OFL_LINALG_RET_lu_factor_ex
#undef OFL_LINALG_RET_geqrf
#undef OFL_LINALG_RET_ldl_factor_ex
#undef OFL_SIG_LINALG_a
#undef OFL_SIG_LINALG_upper
#undef OFL_SIG_LINALG_solve
#undef OFL_SIG_LINALG_mode
#undef OFL_SIG_LINALG_some
#undef OFL_SIG_LINALG_full
#undef OFL_SIG_LINALG_uplo
#undef OFL_SIG_LINALG_triangular
#undef OFL_SIG_LINALG_tau
#undef OFL_SIG_LINALG_ormqr
#undef OFL_SIG_LINALG_hermitian
#undef OFL_SIG_LINALG_ldl_solve
#undef OFL_SIG_LINALG_pivots
#undef OFL_SIG_MATMUL_other
#undef OFL_SIG_MATMUL_mat2
#undef OFL_SIG_MATMUL_addmm
#undef OFL_SIG_MATMUL_linear
#undef OFL_SIG_POOL_max_indices
#undef OFL_SIG_POOL_max
#undef OFL_SIG_POOL_avg_divisor
#undef OFL_SIG_POOL_avg
#undef OFL_SIG_POOL_adaptive
#undef OFL_SIG_NORM_batch_norm
#undef OFL_SIG_NORM_shape_affine
#undef OFL_SIG_NORM_groups_affine
#undef OFL_SIG_NORM_shape_weight
#undef OFL_SIG_SOFTMAX_dim
#undef OFL_SIG_LOSS_nll_smoothing
#undef OFL_SIG_LOSS_nll
#undef OFL_SIG_LOSS_pointwise
#undef OFL_SIG_LOSS_logits
#undef OFL_SIG_NN_MISC_embedding
#undef OFL_SIG_NN_MISC_dropout
#undef OFL_SIG_NN_MISC_attention
#undef OFL_SIG_NN_MISC_flash
#undef OFL_SIG_RNN_lstm
#undef OFL_SIG_RNN_gru
// clang-format on
