// The one thread pool of the library, shared by hashing, packing and kernels.
// parallel_for splits [0, n) into contiguous ranges; the calling thread takes
// part, so a pool of size 1 runs everything inline with no synchronisation.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace onnx_prepack::base {

class ThreadPool {
 public:
  explicit ThreadPool(size_t threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t size() const { return workers_.size() + 1; }

  // Calls fn(task, worker) for every task in [0, tasks); worker < size().
  // Blocks until all are done. Not reentrant: nested calls run inline.
  void parallel_for(size_t tasks, const std::function<void(size_t task, size_t worker)>& fn);

  // The process-wide pool; its size is set by the first call (0 = hardware threads).
  static ThreadPool& shared(size_t threads = 0);

 private:
  void worker_loop(size_t index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(size_t, size_t)>* job_ = nullptr;
  size_t tasks_ = 0;
  // Tasks are claimed and retired with atomics, not under mutex_: with two
  // threads on tiny tasks (a BatchNormalization plane of a few hundred floats)
  // a lock per task made the mutex a futex ping-pong, 2 threads 10x slower than 1.
  std::atomic<size_t> next_{0};
  std::atomic<size_t> pending_{0};
  std::atomic<size_t> generation_{0};
  std::atomic<bool> stop_{false};
  size_t active_ = 0;    // workers inside the current job (under mutex_)
  size_t sleepers_ = 0;  // workers blocked on wake_
  bool busy_ = false;
};

}  // namespace onnx_prepack::base
