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

std::vector<char> Bytes(const std::string& s) {
  return std::vector<char>(s.begin(), s.end());
}

std::string Str(const std::vector<char>& v) {
  return std::string(v.begin(), v.end());
}

TEST(TcpStore, PortZeroCompareSetDeleteNumKeysCheckWait) {
  // Port 0: the kernel picks one, which port() reports and a client reaches.
  auto server = TcpStore::Create("127.0.0.1", 0, true, milliseconds(5000));
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_GT((*server)->port(), 0);
  auto client = TcpStore::Create("127.0.0.1", (*server)->port(), false, milliseconds(5000));
  ASSERT_TRUE(client.ok()) << client.status();
  TcpStore& a = **server;
  TcpStore& b = **client;

  // Counters are decimal text, as torch's stores keep them.
  EXPECT_EQ(*b.Add("n", 7), 7);
  EXPECT_EQ(Str(*a.Get("n")), "7");
  EXPECT_EQ(*a.Add("n", -10), -3);

  // compare_set: unset + empty expected sets; unset + other expected returns expected;
  // a match swaps; a mismatch returns the current value and leaves it.
  EXPECT_EQ(Str(*b.CompareSet("cs", {}, Bytes("one"))), "one");
  EXPECT_EQ(Str(*b.CompareSet("unset", Bytes("x"), Bytes("y"))), "x");
  EXPECT_FALSE(*a.Check({"unset"}));
  EXPECT_EQ(Str(*a.CompareSet("cs", Bytes("one"), Bytes("two"))), "two");
  EXPECT_EQ(Str(*b.CompareSet("cs", Bytes("one"), Bytes("three"))), "two");
  EXPECT_EQ(Str(*b.Get("cs")), "two");

  // num_keys counts n and cs; delete_key says whether the key existed.
  EXPECT_EQ(*a.NumKeys(), 2);
  EXPECT_TRUE(*b.Check({"n", "cs"}));
  EXPECT_TRUE(*b.DeleteKey("n"));
  EXPECT_FALSE(*b.DeleteKey("n"));
  EXPECT_FALSE(*a.Check({"n", "cs"}));
  EXPECT_EQ(*a.NumKeys(), 1);

  // Wait returns once another client sets the keys.
  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(50));
    ASSERT_TRUE(a.Set("w1", Bytes("1")).ok());
    ASSERT_TRUE(a.Set("w2", Bytes("2")).ok());
  });
  EXPECT_TRUE(b.Wait({"w1", "w2"}, milliseconds(5000)).ok());
  setter.join();

  // A wait that times out names the missing key, within its own timeout (not the store's),
  // and leaves the connection usable.
  auto start = std::chrono::steady_clock::now();
  Status st = b.Wait({"w1", "missing"}, milliseconds(150));
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'missing'"), std::string::npos) << st;
  EXPECT_EQ(st.message().find("'w1'"), std::string::npos) << st;
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
  EXPECT_EQ(Str(*b.Get("w2")), "2");

  // A get that times out leaves the connection usable too.
  b.set_timeout(milliseconds(100));
  EXPECT_FALSE(b.Get("never").ok());
  EXPECT_EQ(Str(*b.Get("w1")), "1");
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
