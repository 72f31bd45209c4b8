#include "base/thread_pool.h"

#include <atomic>

namespace onnx_prepack::base {

ThreadPool::ThreadPool(size_t threads) {
  if (threads == 0) threads = std::max<size_t>(1, std::thread::hardware_concurrency());
  for (size_t i = 1; i < threads; ++i) {
    workers_.emplace_back([this, i] { worker_loop(i); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::parallel_for(size_t tasks, const std::function<void(size_t, size_t)>& fn) {
  if (tasks == 0) return;
  std::unique_lock<std::mutex> lock(mutex_);
  if (workers_.empty() || tasks == 1 || busy_) {
    lock.unlock();
    for (size_t t = 0; t < tasks; ++t) fn(t, 0);
    return;
  }
  busy_ = true;
  job_ = &fn;
  tasks_ = tasks;
  next_ = 0;
  pending_ = tasks;
  ++generation_;
  lock.unlock();
  wake_.notify_all();

  // The caller works too, as worker 0.
  for (;;) {
    lock.lock();
    if (next_ >= tasks_) break;
    size_t t = next_++;
    lock.unlock();
    fn(t, 0);
    lock.lock();
    --pending_;
    lock.unlock();
  }
  done_.wait(lock, [this] { return pending_ == 0; });
  job_ = nullptr;
  busy_ = false;
}

void ThreadPool::worker_loop(size_t index) {
  size_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || (generation_ != seen && job_ != nullptr); });
    if (stop_) return;
    seen = generation_;
    while (job_ != nullptr && next_ < tasks_) {
      size_t t = next_++;
      auto* job = job_;
      lock.unlock();
      (*job)(t, index);
      lock.lock();
      if (--pending_ == 0) done_.notify_all();
    }
  }
}

ThreadPool& ThreadPool::shared(size_t threads) {
  static ThreadPool pool(threads);
  return pool;
}

}  // namespace onnx_prepack::base
