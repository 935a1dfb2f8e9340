// Reads the arrays of an uncompressed .npz (numpy.savez) with the standard library only: each
// zip entry `<name>.npy` holds a NumPy header ({'descr': '<f4', 'shape': (16, 64), ...}) and the
// little-endian C-order data, whose length follows from the header. Shared by the examples and
// tests/cpp; not part of the installed API.
#pragma once
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace npz {

struct Array {
  std::string descr;  // "<f4", "<i8", "<f8"
  std::vector<int64_t> shape;
  std::vector<char> bytes;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

inline uint32_t U32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint16_t U16(const char* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

inline std::map<std::string, Array> Load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot open");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::map<std::string, Array> out;
  size_t pos = 0;
  while (pos + 30 <= s.size() && U32(&s[pos]) == 0x04034b50u) {  // local file header
    if (U16(&s[pos + 8]) != 0) throw std::runtime_error(path + ": compressed entries unsupported");
    size_t name_len = U16(&s[pos + 26]), extra_len = U16(&s[pos + 28]);
    std::string name = s.substr(pos + 30, name_len);
    size_t p = pos + 30 + name_len + extra_len;
    if (s.compare(p, 6, "\x93NUMPY") != 0) throw std::runtime_error(path + ": not a .npy entry");
    size_t header_len = static_cast<unsigned char>(s[p + 6]) == 1 ? U16(&s[p + 8]) : U32(&s[p + 8]);
    size_t header_start = p + (static_cast<unsigned char>(s[p + 6]) == 1 ? 10 : 12);
    std::string header = s.substr(header_start, header_len);
    Array a;
    size_t d = header.find("'descr': '");
    a.descr = header.substr(d + 10, header.find('\'', d + 10) - d - 10);
    if (header.find("'fortran_order': True") != std::string::npos)
      throw std::runtime_error(path + ": Fortran order unsupported");
    size_t sh = header.find("'shape': (") + 10;
    std::string dims = header.substr(sh, header.find(')', sh) - sh);
    for (size_t i = 0; i < dims.size();) {
      size_t j = dims.find(',', i);
      std::string tok = dims.substr(i, j == std::string::npos ? std::string::npos : j - i);
      if (tok.find_first_of("0123456789") != std::string::npos) a.shape.push_back(std::stoll(tok));
      if (j == std::string::npos) break;
      i = j + 1;
    }
    size_t item = static_cast<size_t>(std::stoi(a.descr.substr(2)));
    size_t nbytes = static_cast<size_t>(a.numel()) * item;
    size_t data = header_start + header_len;
    if (data + nbytes > s.size()) throw std::runtime_error(path + ": truncated entry " + name);
    a.bytes.assign(s.begin() + data, s.begin() + data + nbytes);
    if (name.size() > 4) name.resize(name.size() - 4);  // drop ".npy"
    out[name] = std::move(a);
    pos = data + nbytes;
    if (pos + 4 <= s.size() && U32(&s[pos]) == 0x08074b50u) pos += 16;  // data descriptor
  }
  return out;
}

}  // namespace npz
