// Tensor printing of the C++ API: the text Python prints (python/oneflow_like/_tensor.py, which
// uses NumPy's array2string with its defaults), ported: per-element shortest digits up to 8
// fractional ones, a common width, scientific notation for wide ranges, lines wrapped at 75
// columns, arrays over 1000 elements summarised with "..." around 3 edge items per dimension.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "oneflow_like/framework/autograd.h"

// Last: the runtime's headers must precede the public API (convert.h says why).
#include "oneflow_like/api/convert.h"

namespace oneflow_like {
inline namespace v1 {
namespace {

constexpr int64_t kThreshold = 1000, kEdgeItems = 3;
constexpr size_t kLineWidth = 75;
constexpr int kPrecision = 8;
// Continuation lines start under the first element: len("tensor(") + len("[").
const char* const kIndent = "        ";

// Formats one element; fillFormat-style widths for the floating case.
class ElementFormat {
 public:
  ElementFormat(const std::vector<double>& shown, Dtype dtype) : dtype_(dtype) {
    is_float_ = dtype == kFloat32 || dtype == kFloat64 || dtype == kFloat16 || dtype == kBFloat16 ||
                dtype == kFloat8_e4m3fn || dtype == kFloat8_e5m2 || dtype == kFloat8_e4m3fnuz ||
                dtype == kFloat8_e5m2fnuz;
    if (!is_float_) {
      for (double v : shown) width_ = std::max(width_, Plain(v).size());
      return;
    }
    double max_abs = 0, min_abs = HUGE_VAL;
    bool finite_any = false, nonfinite = false;
    for (double v : shown) {
      if (!std::isfinite(v)) {
        nonfinite = true;
        continue;
      }
      finite_any = true;
      max_abs = std::max(max_abs, std::abs(v));
      if (v != 0) min_abs = std::min(min_abs, std::abs(v));
    }
    exp_ = finite_any &&
           (max_abs >= 1e8 || (min_abs != HUGE_VAL && (min_abs < 1e-4 || max_abs / min_abs > 1e3)));
    for (double v : shown) {
      if (!std::isfinite(v)) continue;
      std::string s = exp_ ? Scientific(v, Digits(v)) : Positional(v, Digits(v));
      size_t dot = s.find('.'), e = s.find('e');
      pad_left_ = std::max(pad_left_, dot);
      pad_right_ = std::max(pad_right_, (e == std::string::npos ? s.size() : e) - dot - 1);
      if (e != std::string::npos) exp_size_ = std::max(exp_size_, s.size() - e - 2);
    }
    if (nonfinite) {  // "nan" / "-inf" right-aligned in the same width
      size_t offset = pad_right_ + 1;
      pad_left_ = std::max(pad_left_, offset >= 4 ? size_t{0} : 4 - offset);
    }
  }

  std::string operator()(double v) const {
    if (!is_float_) {
      std::string s = Plain(v);
      return std::string(width_ - s.size(), ' ') + s;
    }
    size_t total = pad_left_ + pad_right_ + 1 + (exp_ ? exp_size_ + 2 : 0);
    if (!std::isfinite(v)) {
      std::string s = std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
      return std::string(total > s.size() ? total - s.size() : 0, ' ') + s;
    }
    std::string s;
    if (exp_) {  // the mantissa zero-padded to the common digits, the exponent to its width
      s = Scientific(v, static_cast<int>(pad_right_));
      size_t e = s.find('e');
      std::string digits = s.substr(e + 2);
      s = s.substr(0, e + 2) + std::string(exp_size_ - digits.size(), '0') + digits;
    } else {  // own digits, space-padded on both sides
      s = Positional(v, Digits(v));
      s += std::string(pad_right_ - (s.size() - s.find('.') - 1), ' ');
    }
    size_t dot = s.find('.');
    return std::string(pad_left_ > dot ? pad_left_ - dot : 0, ' ') + s;
  }

 private:
  std::string Plain(double v) const {
    if (dtype_ == kBool) return v != 0 ? "True" : "False";
    return std::to_string(static_cast<long long>(v));
  }
  // Does `text` read back as `v` in the tensor's precision?
  bool RoundTrips(const char* text, double v) const {
    double r = std::strtod(text, nullptr);
    return dtype_ == kFloat64 ? r == v : static_cast<float>(r) == static_cast<float>(v);
  }
  // The fewest fractional (positional) or mantissa (scientific) digits, up to 8, that identify v.
  int Digits(double v) const {
    char buf[64];
    for (int p = 0; p < kPrecision; ++p) {
      std::snprintf(buf, sizeof buf, exp_ ? "%.*e" : "%.*f", p, v);
      if (RoundTrips(buf, v)) return p;
    }
    return kPrecision;
  }
  static std::string Positional(double v, int digits) {  // "1.5", "-2.", "100."
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    std::string s = buf;
    if (digits == 0) s += '.';
    return s;
  }
  static std::string Scientific(double v, int digits) {  // "1.5e+06", "1.e-05"
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", digits, v);
    std::string s = buf;
    if (digits == 0) s.insert(s.find('e'), ".");
    return s;
  }

  Dtype dtype_;
  bool is_float_ = false, exp_ = false;
  size_t width_ = 0, pad_left_ = 0, pad_right_ = 0, exp_size_ = 2;
};

// NumPy's _formatArray: nested brackets, separators, wrapping and summarisation.
struct ArrayPrinter {
  const std::vector<double>& v;
  const IntList& shape;
  const ElementFormat& fmt;
  bool summarize;

  static void ExtendLine(std::string* s, std::string* line, const std::string& word, size_t width,
                         const std::string& indent) {
    bool wrap = line->size() + word.size() > width && line->size() > indent.size();
    if (wrap) {
      size_t end = line->find_last_not_of(' ');
      *s += line->substr(0, end + 1) + "\n";
      *line = indent;
    }
    *line += word;
  }

  std::string Recurse(size_t axis, int64_t offset, const std::string& indent, size_t width) const {
    if (axis == shape.size()) return fmt(v[offset]);
    int64_t n = shape[axis], inner = 1;
    for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
    bool cut = summarize && 2 * kEdgeItems < n;
    std::vector<int64_t> items;
    for (int64_t i = 0; i < n; ++i)
      if (!cut || i < kEdgeItems || i >= n - kEdgeItems) items.push_back(i);
    std::string next_indent = indent + " ", s;
    size_t next_width = width - 1;
    if (axis + 1 == shape.size()) {
      size_t elem_width = width - 1;
      std::string line = indent;
      for (size_t k = 0; k < items.size(); ++k) {
        if (cut && k == static_cast<size_t>(kEdgeItems)) {
          ExtendLine(&s, &line, "...", elem_width, indent);
          line += ", ";
        }
        ExtendLine(&s, &line, fmt(v[offset + items[k] * inner]), elem_width, indent);
        if (k + 1 < items.size()) line += ", ";
      }
      s += line;
    } else {
      std::string sep = "," + std::string(shape.size() - axis - 1, '\n');
      for (size_t k = 0; k < items.size(); ++k) {
        if (cut && k == static_cast<size_t>(kEdgeItems)) s += indent + "..." + sep;
        s += indent + Recurse(axis + 1, offset + items[k] * inner, next_indent, next_width);
        if (k + 1 < items.size()) s += sep;
      }
    }
    return "[" + s.substr(indent.size()) + "]";
  }
};

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "tensor(undefined)";
  RT::RTTensor x = In(*this);
  if (x.is_lazy()) return "tensor(<lazy>, shape=" + x.meta_string() + ")";
  std::vector<double> v = to_vector<double>();
  IntList shape = sizes();
  bool summarize = numel() > kThreshold;
  std::vector<double> shown;  // the elements a summarised print shows decide the format
  if (summarize) {
    IntList idx(shape.size(), 0);
    for (int64_t flat = 0; flat < numel(); ++flat) {
      bool keep = true;
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] > 2 * kEdgeItems && idx[d] >= kEdgeItems && idx[d] < shape[d] - kEdgeItems)
          keep = false;
      if (keep) shown.push_back(v[flat]);
      for (size_t d = shape.size(); d-- > 0;)
        if (++idx[d] < shape[d])
          break;
        else
          idx[d] = 0;
    }
  }
  ElementFormat fmt(summarize ? shown : v, dtype());
  std::string body = shape.empty() ? fmt(v[0])
                                   : ArrayPrinter{v, shape, fmt, summarize}.Recurse(
                                         0, 0, std::string(8, ' '), kLineWidth);
  std::ostringstream os;
  os << "tensor(" << body;
  if (!device().is_cpu()) os << ", device='" << device().str() << "'";
  Dtype dt = dtype();
  if (dt != kFloat32 && dt != kInt64 && dt != kBool)
    os << ", dtype=oneflow_like." << dtype_name(dt);
  if (x.grad_fn())
    os << ", grad_fn=<" << x.grad_fn()->name() << ">";
  else if (requires_grad())
    os << ", requires_grad=True";
  os << ")";
  return os.str();
}
std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  return os << t.str();
}

}  // namespace v1
}  // namespace oneflow_like
