#include "distributed/tcp_store.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "gtest/gtest.h"

namespace oneflow_like {
namespace distributed {
namespace {

using std::chrono::milliseconds;

// A port that was free a moment ago (the kernel picks it).
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

TEST(TcpStore, SetGetAddAcrossClients) {
  const int port = FreePort();
  auto server = TcpStore::Create("127.0.0.1", port, true, milliseconds(5000));
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = TcpStore::Create("127.0.0.1", port, false, milliseconds(5000));
  ASSERT_TRUE(client.ok()) << client.status();
  // A Get issued before the Set waits for it.
  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(50));
    ASSERT_TRUE((*server)->Set("k", {'h', 'i'}).ok());
  });
  auto v = (*client)->Get("k");
  setter.join();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(std::string(v->begin(), v->end()), "hi");
  EXPECT_EQ(*(*client)->Add("n", 2), 2);
  EXPECT_EQ(*(*server)->Add("n", 3), 5);
}

TEST(TcpStore, GetTimesOutNamingTheKey) {
  const int port = FreePort();
  auto server = TcpStore::Create("127.0.0.1", port, true, milliseconds(200));
  ASSERT_TRUE(server.ok());
  auto start = std::chrono::steady_clock::now();
  auto v = (*server)->Get("never");
  EXPECT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("'never'"), std::string::npos) << v.status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(3000));
}

TEST(TcpStore, OccupiedPortAndMissingServerAreClearErrors) {
  const int port = FreePort();
  auto first = TcpStore::Create("127.0.0.1", port, true, milliseconds(1000));
  ASSERT_TRUE(first.ok());
  auto second = TcpStore::Create("127.0.0.1", port, true, milliseconds(1000));
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("cannot listen on 127.0.0.1"), std::string::npos)
      << second.status();
  auto nobody = TcpStore::Create("127.0.0.1", FreePort(), false, milliseconds(200));
  ASSERT_FALSE(nobody.ok());
  EXPECT_NE(nobody.status().message().find("could not reach the store"), std::string::npos)
      << nobody.status();
}

TEST(TcpStore, ForeignListenerIsRecognised) {
  // A listener that accepts and says nothing: the greeting times out and is reported.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::listen(fd, 4);
  auto c = TcpStore::Create("127.0.0.1", ntohs(a.sin_port), false, milliseconds(300));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("not a oneflow_like store"), std::string::npos) << c.status();
  ::close(fd);
}

}  // namespace
}  // namespace distributed
}  // namespace oneflow_like
