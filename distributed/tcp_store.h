// TcpStore: the key-value store the ranks of a process group meet through (Gloo's
// rendezvous::Store interface, served over TCP). Rank 0 runs the server on host:port; every rank,
// rank 0 included, talks to it through one client connection.
// Lifecycle: Create (server: bind + listen, then every rank connects, retrying until the
// timeout) -> Set / Get / Add while the group starts -> destructor (the server stops and joins
// its threads). Gets block until the key is set or the timeout expires, never forever.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gloo/rendezvous/store.h"
#include "oneflow_like/base/status.h"

namespace oneflow_like {
namespace distributed {

class TcpStoreServer;

class TcpStore : public gloo::rendezvous::Store {
 public:
  // `is_server`: also listen on host:port (rank 0). An occupied port, an unreachable host or a
  // listener that does not speak this protocol fail with a message naming host:port.
  static StatusOr<std::unique_ptr<TcpStore>> Create(const std::string& host, int port,
                                                    bool is_server,
                                                    std::chrono::milliseconds timeout);
  ~TcpStore() override;

  Status Set(const std::string& key, const std::vector<char>& value);
  // Waits up to the store's timeout for `key` to be set.
  StatusOr<std::vector<char>> Get(const std::string& key);
  // Adds `delta` to the integer at `key` (0 if unset) and returns the new value. The value is
  // stored as decimal text (as torch's stores do: get() of a counter reads "3").
  StatusOr<int64_t> Add(const std::string& key, int64_t delta);
  // torch.distributed.Store.compare_set: sets `desired` when the key holds `expected` (or is
  // unset and `expected` is empty) and returns the value now stored; otherwise returns the
  // current value (`expected` when the key is unset).
  StatusOr<std::vector<char>> CompareSet(const std::string& key, const std::vector<char>& expected,
                                         const std::vector<char>& desired);
  // Removes `key`; false when it was not set.
  StatusOr<bool> DeleteKey(const std::string& key);
  // The number of keys set (the process group's own keys included, as in torch).
  StatusOr<int64_t> NumKeys();
  // Whether every key of `keys` is set now (no waiting).
  StatusOr<bool> Check(const std::vector<std::string>& keys);
  // Waits until every key of `keys` is set, up to `timeout` (the server waits, so a timeout
  // leaves the connection usable); the error names the keys still missing.
  Status Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

  // Gloo's interface (throws gloo::IoException on failure; Gloo's rendezvous calls these).
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

  std::string address() const { return host_ + ":" + std::to_string(port_); }
  const std::string& host() const { return host_; }
  // The server's port (the one the kernel chose when created with port 0).
  int port() const { return port_; }

 private:
  TcpStore(std::string host, int port, std::chrono::milliseconds timeout);
  Status Connect();
  Status Request(uint8_t op, const std::string& key, const std::vector<char>& value,
                 std::vector<char>* reply, std::chrono::milliseconds timeout);

  std::string host_;
  int port_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<TcpStoreServer> server_;
  std::mutex mu_;  // one request in flight per client
  int fd_ = -1;
};

}  // namespace distributed
}  // namespace oneflow_like
