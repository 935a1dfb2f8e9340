#include "distributed/tcp_store.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "gloo/common/error.h"

namespace oneflow_like {
namespace distributed {

namespace {
// Wire format: request = op (1 byte), key length (u32), key, value length (u32), value;
// reply = length (u32), bytes. A client opens with kMagic and the server echoes it.
constexpr uint32_t kMagic = 0x4F464C53;  // "OFLS"
enum Op : uint8_t {
  kSet = 1,
  kGet = 2,
  kAdd = 3,
  kCompareSet = 4,  // value: u32 length of expected, expected, desired
  kDelete = 5,      // reply: 1 byte, whether the key was set
  kNumKeys = 6,     // reply: int64
  kWait = 7,        // key: the keys joined by '\0'; value: int64 timeout in ms (-1: check only);
                    // reply: the keys still missing, joined by '\0' (empty: all set)
};

std::vector<std::string> SplitKeys(const std::string& joined) {
  std::vector<std::string> keys;
  if (joined.empty()) return keys;
  size_t start = 0;
  for (;;) {
    size_t end = joined.find('\0', start);
    keys.push_back(joined.substr(start, end == std::string::npos ? end : end - start));
    if (end == std::string::npos) return keys;
    start = end + 1;
  }
}

std::string JoinKeys(const std::vector<std::string>& keys) {
  std::string out;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) out.push_back('\0');
    out += keys[i];
  }
  return out;
}

// Add's counters are decimal text; a key that holds something else counts as 0.
int64_t ParseCounter(const std::vector<char>& v) {
  int64_t x = 0;
  return absl::SimpleAtoi(absl::string_view(v.data(), v.size()), &x) ? x : 0;
}

using Clock = std::chrono::steady_clock;

std::string Errno() {
  return std::strerror(errno);
}

// Writes all of `n` bytes (MSG_NOSIGNAL: a closed peer is an error, not SIGPIPE).
bool SendAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

// Reads exactly `n` bytes before `deadline`. Returns an error naming what went wrong.
Status RecvAll(int fd, void* data, size_t n, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return absl::DeadlineExceededError("timed out");
    pollfd pfd{fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return absl::UnavailableError(Errno());
    if (r == 0) continue;
    ssize_t k = ::recv(fd, p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k == 0) return absl::UnavailableError("connection closed by the store's server");
    if (k < 0) return absl::UnavailableError(Errno());
    p += k;
    n -= static_cast<size_t>(k);
  }
  return Status();
}

// Blocking read used by the server's connection threads (they stop when the socket is shut).
bool RecvBlocking(int fd, void* data, size_t n) {
  return RecvAll(fd, data, n, Clock::time_point::max()).ok();
}

StatusOr<sockaddr_in> Resolve(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr)
    return InvalidArgument("cannot resolve host '%s': %s", host, gai_strerror(rc));
  sockaddr_in addr = *reinterpret_cast<sockaddr_in*>(res->ai_addr);
  ::freeaddrinfo(res);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}
}  // namespace

// The server: an accept thread and one thread per connected client (a process group has few
// ranks). A Get for a missing key waits on the condition variable until a Set provides it.
class TcpStoreServer {
 public:
  static StatusOr<std::unique_ptr<TcpStoreServer>> Start(const std::string& host, int port) {
    ASSIGN_OR_RETURN(sockaddr_in addr, Resolve(host, port));
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", Errno()));
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(fd, 128) != 0) {
      std::string err = Errno();
      ::close(fd);
      return absl::UnavailableError(absl::StrFormat(
          "cannot listen on %s:%d: %s (is another job using this port? choose another "
          "MASTER_PORT)",
          host, port, err));
    }
    sockaddr_in bound{};
    socklen_t len = sizeof(bound);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    auto s = std::unique_ptr<TcpStoreServer>(new TcpStoreServer(fd));
    s->port_ = ntohs(bound.sin_port);
    s->accept_thread_ = std::thread([p = s.get()] { p->AcceptLoop(); });
    return s;
  }

  int port() const { return port_; }

  ~TcpStoreServer() {
    stop_.store(true);
    ::shutdown(listen_fd_, SHUT_RDWR);
    accept_thread_.join();
    ::close(listen_fd_);
    {
      std::lock_guard<std::mutex> l(mu_);
      for (int fd : client_fds_) ::shutdown(fd, SHUT_RDWR);
    }
    cv_.notify_all();
    for (auto& t : client_threads_) t.join();
    for (int fd : client_fds_) ::close(fd);
  }

 private:
  explicit TcpStoreServer(int fd) : listen_fd_(fd) {}

  void AcceptLoop() {
    while (!stop_.load()) {
      pollfd pfd{listen_fd_, POLLIN, 0};
      if (::poll(&pfd, 1, 100) <= 0) continue;
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      std::lock_guard<std::mutex> l(mu_);
      if (stop_.load()) {
        ::close(fd);
        break;
      }
      client_fds_.push_back(fd);
      client_threads_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  void Serve(int fd) {
    uint32_t magic = 0;
    if (!RecvBlocking(fd, &magic, 4) || magic != kMagic || !SendAll(fd, &kMagic, 4)) return;
    for (;;) {
      uint8_t op;
      uint32_t klen, vlen;
      if (!RecvBlocking(fd, &op, 1) || !RecvBlocking(fd, &klen, 4)) return;
      std::string key(klen, '\0');
      if (!RecvBlocking(fd, key.data(), klen) || !RecvBlocking(fd, &vlen, 4)) return;
      std::vector<char> value(vlen);
      if (!RecvBlocking(fd, value.data(), vlen)) return;
      std::vector<char> reply;
      {
        std::unique_lock<std::mutex> l(mu_);
        if (op == kSet) {
          data_[key] = std::move(value);
          cv_.notify_all();
        } else if (op == kGet) {
          cv_.wait(l, [&] { return stop_.load() || data_.count(key) > 0; });
          if (stop_.load()) return;
          reply = data_[key];
        } else if (op == kAdd) {
          int64_t delta = 0;
          if (value.size() == 8) std::memcpy(&delta, value.data(), 8);
          auto it = data_.find(key);
          const int64_t cur = (it == data_.end() ? 0 : ParseCounter(it->second)) + delta;
          const std::string text = std::to_string(cur);
          data_[key].assign(text.begin(), text.end());
          reply.resize(8);
          std::memcpy(reply.data(), &cur, 8);
          cv_.notify_all();
        } else if (op == kCompareSet) {
          uint32_t elen = 0;
          if (value.size() >= 4) std::memcpy(&elen, value.data(), 4);
          if (value.size() < 4 + size_t{elen}) return;
          std::vector<char> expected(value.begin() + 4, value.begin() + 4 + elen);
          std::vector<char> desired(value.begin() + 4 + elen, value.end());
          auto it = data_.find(key);
          if (it == data_.end()) {
            if (expected.empty()) {
              data_[key] = desired;
              cv_.notify_all();
              reply = std::move(desired);
            } else {
              reply = std::move(expected);
            }
          } else if (it->second == expected) {
            it->second = desired;
            cv_.notify_all();
            reply = std::move(desired);
          } else {
            reply = it->second;
          }
        } else if (op == kDelete) {
          reply.assign(1, data_.erase(key) > 0 ? 1 : 0);
        } else if (op == kNumKeys) {
          const int64_t n = static_cast<int64_t>(data_.size());
          reply.resize(8);
          std::memcpy(reply.data(), &n, 8);
        } else if (op == kWait) {
          int64_t ms = -1;
          if (value.size() == 8) std::memcpy(&ms, value.data(), 8);
          const std::vector<std::string> keys = SplitKeys(key);
          auto missing = [&] {
            std::vector<std::string> out;
            for (const auto& k : keys)
              if (data_.count(k) == 0) out.push_back(k);
            return out;
          };
          if (ms > 0)
            cv_.wait_until(l, Clock::now() + std::chrono::milliseconds(ms),
                           [&] { return stop_.load() || missing().empty(); });
          if (stop_.load()) return;
          const std::string left = JoinKeys(missing());
          reply.assign(left.begin(), left.end());
        } else {
          return;
        }
      }
      uint32_t n = static_cast<uint32_t>(reply.size());
      if (!SendAll(fd, &n, 4) || !SendAll(fd, reply.data(), n)) return;
    }
  }

  int listen_fd_;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread accept_thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<char>> data_;
  std::vector<int> client_fds_;
  std::vector<std::thread> client_threads_;
};

StatusOr<std::unique_ptr<TcpStore>> TcpStore::Create(const std::string& host, int port,
                                                     bool is_server,
                                                     std::chrono::milliseconds timeout) {
  std::unique_ptr<TcpStore> store(new TcpStore(host, port, timeout));
  if (is_server) {
    ASSIGN_OR_RETURN(store->server_, TcpStoreServer::Start(host, port));
    store->port_ = store->server_->port();
  }
  RETURN_IF_ERROR(store->Connect());
  return store;
}

TcpStore::TcpStore(std::string host, int port, std::chrono::milliseconds timeout)
    : host_(std::move(host)), port_(port), timeout_(timeout) {}

TcpStore::~TcpStore() {
  if (fd_ >= 0) ::close(fd_);
  server_.reset();
}

Status TcpStore::Connect() {
  ASSIGN_OR_RETURN(sockaddr_in addr, Resolve(host_, port_));
  const auto deadline = Clock::now() + timeout_;
  std::string last = "no attempt";
  // The server may start after the clients: retry refused connections until the deadline.
  while (Clock::now() < deadline) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", Errno()));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      uint32_t echo = 0;
      Status st = SendAll(fd, &kMagic, 4) ? RecvAll(fd, &echo, 4, deadline)
                                          : absl::UnavailableError("send failed");
      if (st.ok() && echo == kMagic) {
        fd_ = fd;
        return Status();
      }
      ::close(fd);
      return absl::UnavailableError(absl::StrFormat(
          "%s:%d answered but is not a oneflow_like store (%s): another program uses this port",
          host_, port_, st.ok() ? "wrong greeting" : std::string(st.message())));
    }
    last = Errno();
    ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return absl::DeadlineExceededError(
      absl::StrFormat("could not reach the store at %s:%d within %d ms (last error: %s); is rank "
                      "0 running with the same MASTER_ADDR/MASTER_PORT?",
                      host_, port_, int64_t(timeout_.count()), last));
}

Status TcpStore::Request(uint8_t op, const std::string& key, const std::vector<char>& value,
                         std::vector<char>* reply, std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> l(mu_);
  if (fd_ < 0)
    return absl::UnavailableError("the store's connection was closed by an earlier error");
  uint32_t klen = static_cast<uint32_t>(key.size()), vlen = static_cast<uint32_t>(value.size());
  bool sent = SendAll(fd_, &op, 1) && SendAll(fd_, &klen, 4) && SendAll(fd_, key.data(), klen) &&
              SendAll(fd_, &vlen, 4) && SendAll(fd_, value.data(), vlen);
  Status st = sent ? Status() : absl::UnavailableError("the store's server closed the connection");
  const auto deadline = Clock::now() + timeout;
  uint32_t n = 0;
  if (st.ok()) st = RecvAll(fd_, &n, 4, deadline);
  if (st.ok()) {
    reply->resize(n);
    st = RecvAll(fd_, reply->data(), n, deadline);
  }
  if (!st.ok()) {
    // A late reply would desynchronise the stream: this connection is done.
    ::close(fd_);
    fd_ = -1;
    return absl::Status(st.code(), absl::StrFormat("[store %s] '%s': %s after %d ms", address(),
                                                   key, st.message(), int64_t(timeout.count())));
  }
  return Status();
}

Status TcpStore::Set(const std::string& key, const std::vector<char>& value) {
  std::vector<char> reply;
  return Request(kSet, key, value, &reply, timeout_);
}

StatusOr<std::vector<char>> TcpStore::Get(const std::string& key) {
  // Waiting on the server first: a get that times out leaves the connection usable.
  RETURN_IF_ERROR(Wait({key}, timeout_));
  std::vector<char> reply;
  RETURN_IF_ERROR(Request(kGet, key, {}, &reply, timeout_));
  return reply;
}

StatusOr<int64_t> TcpStore::Add(const std::string& key, int64_t delta) {
  std::vector<char> v(8), reply;
  std::memcpy(v.data(), &delta, 8);
  RETURN_IF_ERROR(Request(kAdd, key, v, &reply, timeout_));
  int64_t out = 0;
  if (reply.size() == 8) std::memcpy(&out, reply.data(), 8);
  return out;
}

StatusOr<std::vector<char>> TcpStore::CompareSet(const std::string& key,
                                                 const std::vector<char>& expected,
                                                 const std::vector<char>& desired) {
  std::vector<char> v(4), reply;
  const uint32_t elen = static_cast<uint32_t>(expected.size());
  std::memcpy(v.data(), &elen, 4);
  v.insert(v.end(), expected.begin(), expected.end());
  v.insert(v.end(), desired.begin(), desired.end());
  RETURN_IF_ERROR(Request(kCompareSet, key, v, &reply, timeout_));
  return reply;
}

StatusOr<bool> TcpStore::DeleteKey(const std::string& key) {
  std::vector<char> reply;
  RETURN_IF_ERROR(Request(kDelete, key, {}, &reply, timeout_));
  return reply.size() == 1 && reply[0] == 1;
}

StatusOr<int64_t> TcpStore::NumKeys() {
  std::vector<char> reply;
  RETURN_IF_ERROR(Request(kNumKeys, "", {}, &reply, timeout_));
  int64_t n = 0;
  if (reply.size() == 8) std::memcpy(&n, reply.data(), 8);
  return n;
}

StatusOr<bool> TcpStore::Check(const std::vector<std::string>& keys) {
  std::vector<char> v(8), reply;
  const int64_t ms = -1;
  std::memcpy(v.data(), &ms, 8);
  RETURN_IF_ERROR(Request(kWait, JoinKeys(keys), v, &reply, timeout_));
  return reply.empty();
}

Status TcpStore::Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::vector<char> v(8), reply;
  const int64_t ms = std::max<int64_t>(1, timeout.count());
  std::memcpy(v.data(), &ms, 8);
  // The server answers by the deadline; the client allows it the store's timeout on top.
  RETURN_IF_ERROR(Request(kWait, JoinKeys(keys), v, &reply, timeout + timeout_));
  if (reply.empty()) return Status();
  std::vector<std::string> missing = SplitKeys(std::string(reply.begin(), reply.end()));
  return absl::DeadlineExceededError(
      absl::StrFormat("[store %s] wait timed out after %d ms; keys not set: '%s'", address(),
                      int64_t(timeout.count()), absl::StrJoin(missing, "', '")));
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  Status st = Set(key, data);
  if (!st.ok()) throw gloo::IoException(std::string(st.message()));
}

std::vector<char> TcpStore::get(const std::string& key) {
  auto r = Get(key);
  if (!r.ok()) throw gloo::IoException(std::string(r.status().message()));
  return *std::move(r);
}

void TcpStore::wait(const std::vector<std::string>& keys) {
  wait(keys, timeout_);
}

void TcpStore::wait(const std::vector<std::string>& keys,
                    const std::chrono::milliseconds& timeout) {
  Status st = Wait(keys, timeout);
  if (!st.ok()) throw gloo::IoException(std::string(st.message()));
}

}  // namespace distributed
}  // namespace oneflow_like
