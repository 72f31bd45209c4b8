#include "base/thread_pool.h"

#include <atomic>
#include <chrono>

namespace onnx_prepack::base {
namespace {

// Kernels issue many short parallel_for calls back to back (an elementwise op
// on a 160x160 map takes ~50 us); a futex sleep and wake in a VM costs about as
// much, which made 2 threads slower than 1 on such ops. Workers and the caller
// therefore spin this long before they block.
constexpr auto kSpin = std::chrono::microseconds(200);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins until done() or kSpin has passed; true when done.
template <typename Done>
bool spin_until(Done&& done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 1;; ++i) {
    if (done()) return true;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) return done();
  }
}

}  // namespace

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
  next_.store(0, std::memory_order_relaxed);
  pending_.store(tasks, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release);
  const bool sleeping = sleepers_ > 0;
  lock.unlock();
  if (sleeping) wake_.notify_all();

  // The caller works too, as worker 0.
  for (;;) {
    const size_t t = next_.fetch_add(1, std::memory_order_acq_rel);
    if (t >= tasks) break;
    fn(t, 0);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
  spin_until([this] { return pending_.load(std::memory_order_acquire) == 0; });
  lock.lock();
  // Workers still inside the job only claim past the end; wait for them to
  // leave so that none can claim a task of the next job for this one's fn.
  done_.wait(lock,
             [this] { return pending_.load(std::memory_order_acquire) == 0 && active_ == 0; });
  job_ = nullptr;
  busy_ = false;
}

void ThreadPool::worker_loop(size_t index) {
  size_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (!stop_ && generation_ == seen) {
      lock.unlock();
      spin_until([&] { return stop_ || generation_.load(std::memory_order_acquire) != seen; });
      lock.lock();
    }
    ++sleepers_;
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    --sleepers_;
    if (stop_) return;
    seen = generation_;
    if (job_ == nullptr) continue;  // that job is already over
    const auto* job = job_;
    const size_t tasks = tasks_;
    ++active_;
    lock.unlock();
    for (;;) {
      const size_t t = next_.fetch_add(1, std::memory_order_acq_rel);
      if (t >= tasks) break;
      (*job)(t, index);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
    lock.lock();
    --active_;
    done_.notify_all();
  }
}

ThreadPool& ThreadPool::shared(size_t threads) {
  static ThreadPool pool(threads);
  return pool;
}

}  // namespace onnx_prepack::base
