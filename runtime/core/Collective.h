//===- runtime/core/Collective.h - How the ranks of a sharded run meet -*- C++ -*-===//
//
// A sharded program (passes/Shard.h) runs once per rank; its all_reduce steps are
// where the ranks meet. A Communicator is that meeting place for one group of
// ranks: host threads of this process here (hostCommunicator), the GPUs of a
// device set through NCCL in a CUDA build. A rank's executable holds a RankOf, its
// communicator and its rank.
//
// Every rank receives the same bits: the ranks' values are combined in rank order,
// whatever order they arrive in. A rank that fails aborts the group, so that the
// others, waiting in an all-reduce for it, throw instead of waiting forever.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Attr.h"
#include "runtime/core/Array.h"
#include "support/Error.h"

#include <memory>

namespace graphc {

/// How all_reduce combines the ranks' values.
enum class Reduction { Sum, Max, Min };

/// The reduction of an all_reduce node's attributes ("" is the sum).
Reduction reductionOf(const ir::Attrs& attrs);

/// What an all-reduce throws on the ranks that did not fail when another did.
class AbortedError : public Error {
public:
  using Error::Error;
};

/// The meeting place of one group of ranks.
class Communicator {
public:
  virtual ~Communicator();
  /// How many ranks meet here.
  virtual int size() const = 0;
  /// True when every rank is a thread of this process: they share its cores, so a
  /// rank's library calls use one thread each (their ranks are the parallelism).
  virtual bool inProcess() const = 0;
  /// Called by rank `rank` with its value `x` (the same type on every rank): returns,
  /// on each rank, a new array holding the reduction of every rank's `x`, combined in
  /// rank order. Waits for every rank. Throws AbortedError when the group was
  /// aborted, naming the rank that failed.
  virtual Array allReduce(int rank, const Array& x, Reduction reduction) = 0;
  /// Rank `rank` failed: every all-reduce of this run, waiting or to come, throws.
  virtual void abort(int rank) = 0;
  /// Starts a run: forgets an earlier abort. Called while no rank is inside allReduce.
  virtual void reset() = 0;
};

/// `ranks` ranks that are threads of this process, meeting in host memory.
std::shared_ptr<Communicator> hostCommunicator(int ranks);

/// Rank `rank` of `ranks` processes (one rank each, on one host or several) meeting
/// over a stream socket at `address`: "HOST:PORT" (TCP) or "unix:PATH" (a Unix
/// socket). Rank 0 listens there and combines the ranks' values; the others connect
/// to it, retrying until `timeoutSeconds` pass. Blocks until every rank has joined.
/// Takes host arrays. A process that fails calls abort(), and one that dies closes
/// its socket: either way the others' all-reduces throw AbortedError, and the group
/// is done (reset() throws): the processes connect again. Throws graphc::Error when
/// the address is malformed or the group does not form in time.
std::shared_ptr<Communicator> socketCommunicator(const std::string& address, int ranks, int rank,
                                                 int timeoutSeconds = 60);

/// into = into op x, elementwise (one type, dense host arrays); NaN wins a max or
/// min. How every communicator combines two ranks' values.
void reduceInto(const Array& into, const Array& x, Reduction reduction);

/// Where one rank's program meets the others.
struct RankOf {
  std::shared_ptr<Communicator> comm;
  int rank = 0;
};

/// `x` reduced over the ranks of `rank` (null: one rank, `x` itself).
Array allReduce(const RankOf* rank, const Array& x, Reduction reduction);

} // namespace graphc
