//===- runtime/core/SocketCommunicator.cpp - Ranks that are processes -----===//
//
// A star over stream sockets: rank 0 accepts one connection from every other
// rank (each says its rank first). An all-reduce is one message from each rank to
// rank 0, read in rank order, and one reply to each: the reduction in rank order,
// or an abort naming the rank that failed. A rank that fails sends an abort
// instead of its value (rank 0 sends one to every rank); a closed socket counts as
// its rank failing. Messages are a fixed header and the value's bytes.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Collective.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringRef.h"

#include <fmt/format.h>

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace graphc {
namespace {

constexpr uint32_t kMagic = 0x67637231; // "gcr1"

/// What a message carries.
enum class Kind : uint32_t { Hello, Value, Abort };

struct Header {
  uint32_t magic = kMagic;
  Kind kind = Kind::Value;
  int32_t rank = 0;       ///< the sender (Hello, Value) or the rank that failed (Abort)
  uint32_t dtype = 0;     ///< ir::DType of the value
  uint32_t reduction = 0; ///< Reduction
  int64_t bytes = 0;      ///< the value's bytes that follow
};

/// A connected stream socket, closed when it goes.
class Socket {
public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  int fd() const { return fd_; }

  /// Sends all `n` bytes; false when the peer is gone.
  bool send(const void* data, size_t n) const {
    return whole(static_cast<const char*>(data), n,
                 [&](const char* p, size_t k) { return ::send(fd_, p, k, MSG_NOSIGNAL); });
  }
  /// Receives exactly `n` bytes; false when the peer is gone first.
  bool recv(void* data, size_t n) const {
    return whole(static_cast<char*>(data), n,
                 [&](char* p, size_t k) { return ::recv(fd_, p, k, 0); });
  }

private:
  /// Calls io(p, left) until all `n` bytes from `p` are moved; false when it moves
  /// none (the peer is gone) or fails.
  template <typename P, typename Io> static bool whole(P p, size_t n, Io io) {
    while (n > 0) {
      ssize_t k = io(p, n);
      if (k < 0 && errno == EINTR)
        continue;
      if (k <= 0)
        return false;
      p += k;
      n -= static_cast<size_t>(k);
    }
    return true;
  }

  int fd_ = -1;
};

/// Where to meet: a resolved socket address.
struct Address {
  int family = AF_UNIX;
  sockaddr_storage storage{};
  socklen_t length = 0;
  std::string text;

  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  /// The socket file's path of a unix address, else null.
  const char* unixPath() const {
    return family == AF_UNIX ? reinterpret_cast<const sockaddr_un*>(&storage)->sun_path : nullptr;
  }

  static Address parse(const std::string& text) {
    Address a;
    a.text = text;
    llvm::StringRef t(text);
    if (t.startswith("unix:")) {
      std::string path = t.drop_front(5).str();
      sockaddr_un un{};
      if (path.empty() || path.size() >= sizeof(un.sun_path))
        throw Error(fmt::format("communicator address '{}': the socket path must have 1 to {} "
                                "characters",
                                text, sizeof(un.sun_path) - 1));
      un.sun_family = AF_UNIX;
      std::memcpy(un.sun_path, path.c_str(), path.size() + 1);
      std::memcpy(&a.storage, &un, sizeof(un));
      a.length = sizeof(un);
      return a;
    }
    auto [host, port] = t.rsplit(':');
    if (host.startswith("[") && host.endswith("]")) // [::1]:port
      host = host.drop_front().drop_back();
    unsigned number = 0;
    if (host.empty() || port.getAsInteger(10, number) || number > 65535)
      throw Error(fmt::format("communicator address '{}' is not HOST:PORT or unix:PATH", text));
    addrinfo hints{}, *found = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    if (int e = getaddrinfo(host.str().c_str(), port.str().c_str(), &hints, &found); e != 0)
      throw Error(fmt::format("communicator address '{}': {}", text, gai_strerror(e)));
    a.family = found->ai_family;
    std::memcpy(&a.storage, found->ai_addr, found->ai_addrlen);
    a.length = found->ai_addrlen;
    freeaddrinfo(found);
    return a;
  }
};

[[noreturn]] void systemError(const std::string& what) {
  throw Error(fmt::format("{}: {}", what, std::strerror(errno)));
}

class SocketCommunicator final : public Communicator {
public:
  SocketCommunicator(const std::string& address, int ranks, int rank, int timeoutSeconds)
      : ranks_(ranks), rank_(rank), peers_(rank == 0 ? ranks : 1) {
    if (ranks < 1 || rank < 0 || rank >= ranks)
      throw Error(fmt::format("communicator: rank {} of {} ranks", rank, ranks));
    Address a = Address::parse(address);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
    if (rank == 0)
      accept(a, deadline);
    else
      connect(a, deadline);
  }

  int size() const override { return ranks_; }
  bool inProcess() const override { return false; }

  Array allReduce(int rank, const Array& x, Reduction reduction) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (rank != rank_)
      throw Error(fmt::format("internal error: all_reduce on rank {} of the process of rank {}",
                              rank, rank_));
    if (x.device() != Device::Host)
      throw Error("all_reduce: the socket communicator takes host arrays only");
    throwIfAborted();
    Array mine = x.contiguous();
    Header h{kMagic,
             Kind::Value,
             rank_,
             static_cast<uint32_t>(x.dtype()),
             static_cast<uint32_t>(reduction),
             mine.type().bytes()};
    return rank_ == 0 ? combine(mine, h) : exchange(mine, h);
  }

  void abort(int rank) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_ >= 0)
      return;
    aborted_ = rank;
    Header h{kMagic, Kind::Abort, rank, 0, 0, 0};
    for (const Socket& s : peers_)
      if (s.fd() >= 0)
        s.send(&h, sizeof h);
  }

  void reset() override {
    std::lock_guard<std::mutex> lock(mutex_);
    throwIfAborted();
  }

private:
  void throwIfAborted() const {
    if (aborted_ >= 0)
      throw AbortedError(fmt::format("all_reduce: rank {} of {} failed", aborted_, ranks_));
  }

  /// Rank 0: every other rank's value in rank order, combined with `mine`; the
  /// result (or an abort) sent to each.
  Array combine(const Array& mine, const Header& want) {
    Array result = mine.clone();
    Array theirs = Array::empty(mine.dtype(), mine.shape());
    for (int r = 1; r < ranks_ && aborted_ < 0; ++r) {
      Header h;
      if (!peers_[r].recv(&h, sizeof h) || h.magic != kMagic)
        aborted_ = r; // gone
      else if (h.kind == Kind::Abort)
        aborted_ = h.rank;
      else if (h.kind != Kind::Value || h.dtype != want.dtype || h.bytes != want.bytes ||
               h.reduction != want.reduction || !peers_[r].recv(theirs.rawData(), h.bytes))
        aborted_ = r; // out of step: a program that is not the same
      else
        reduceInto(result, theirs, static_cast<Reduction>(want.reduction));
    }
    if (aborted_ >= 0) {
      Header h{kMagic, Kind::Abort, aborted_, 0, 0, 0};
      for (int r = 1; r < ranks_; ++r)
        peers_[r].send(&h, sizeof h);
      throwIfAborted();
    }
    Header h = want;
    h.rank = 0;
    for (int r = 1; r < ranks_; ++r)
      if (!peers_[r].send(&h, sizeof h) || !peers_[r].send(result.rawData(), h.bytes))
        aborted_ = r; // its next all-reduce finds rank 0 waiting for it no more
    return result;
  }

  /// Another rank: `mine` to rank 0, the result back.
  Array exchange(const Array& mine, const Header& h) {
    const Socket& root = peers_[0];
    Header reply;
    if (!root.send(&h, sizeof h) || !root.send(mine.rawData(), h.bytes) ||
        !root.recv(&reply, sizeof reply) || reply.magic != kMagic)
      aborted_ = 0; // rank 0 is gone
    else if (reply.kind == Kind::Abort)
      aborted_ = reply.rank;
    throwIfAborted();
    Array out = Array::empty(mine.dtype(), mine.shape());
    if (reply.bytes != h.bytes || !root.recv(out.rawData(), h.bytes)) {
      aborted_ = 0;
      throwIfAborted();
    }
    return out;
  }

  void accept(const Address& a, std::chrono::steady_clock::time_point deadline) {
    Socket listener(::socket(a.family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (listener.fd() < 0)
      systemError("communicator: socket");
    int on = 1;
    setsockopt(listener.fd(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    const char* path = a.unixPath();
    if (path)
      ::unlink(path); // a stale one
    if (::bind(listener.fd(), a.get(), a.length) != 0)
      systemError(fmt::format("communicator: cannot listen at {}", a.text));
    // The socket's file goes with the listener, whether the ranks met or not.
    auto removeFile = llvm::make_scope_exit([path] {
      if (path)
        ::unlink(path);
    });
    if (::listen(listener.fd(), ranks_) != 0)
      systemError(fmt::format("communicator: cannot listen at {}", a.text));
    for (int joined = 1; joined < ranks_;) {
      timeval wait = remaining(deadline, a.text, joined);
      setsockopt(listener.fd(), SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
      Socket s(::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC));
      if (s.fd() < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
          continue;
        systemError(fmt::format("communicator: accept at {}", a.text));
      }
      Header h;
      if (!s.recv(&h, sizeof h) || h.magic != kMagic || h.kind != Kind::Hello || h.rank < 1 ||
          h.rank >= ranks_ || peers_[h.rank].fd() >= 0)
        continue; // not one of ours, or a rank twice: not counted
      noDelay(s);
      peers_[h.rank] = std::move(s);
      ++joined;
    }
  }

  void connect(const Address& a, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      Socket s(::socket(a.family, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (s.fd() < 0)
        systemError("communicator: socket");
      if (::connect(s.fd(), a.get(), a.length) == 0) {
        Header h{kMagic, Kind::Hello, rank_, 0, 0, 0};
        if (!s.send(&h, sizeof h))
          systemError(fmt::format("communicator: rank {} cannot join at {}", rank_, a.text));
        noDelay(s);
        peers_[0] = std::move(s);
        return;
      }
      remaining(deadline, a.text, rank_); // rank 0 may not listen yet
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  /// What is left until `deadline` (at least 1 ms); throws when it has passed.
  timeval remaining(std::chrono::steady_clock::time_point deadline, const std::string& where,
                    int who) const {
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      throw Error(fmt::format("communicator at {}: the {} ranks did not meet in time ({})", where,
                              ranks_,
                              rank_ == 0 ? fmt::format("{} of them joined", who)
                                         : fmt::format("rank {} found no rank 0", who)));
    int64_t us = std::max<int64_t>(left.count(), 1000);
    return timeval{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
  }

  static void noDelay(const Socket& s) {
    int on = 1;
    setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on); // fails harmlessly on unix
  }

  const int ranks_, rank_;
  std::vector<Socket> peers_; ///< rank 0: by rank (its own unused); others: rank 0's
  std::mutex mutex_;
  int aborted_ = -1;
};

} // namespace

std::shared_ptr<Communicator> socketCommunicator(const std::string& address, int ranks, int rank,
                                                 int timeoutSeconds) {
  return std::make_shared<SocketCommunicator>(address, ranks, rank, timeoutSeconds);
}

} // namespace graphc
