// The CPU backend's worker threads (src/core/thread_pool.hpp): std::thread, a mutex and two condition
// variables; tasks are handed out through one atomic counter.
#include "thread_pool.hpp"

namespace kestrel::detail {

int resolve_threads(int threads) {
    if (threads > 0) return threads;
    const unsigned hw = std::thread::hardware_concurrency();
    return hw > 0 ? static_cast<int>(hw) : 1;
}

ThreadPool::ThreadPool(int threads) {
    const int n = resolve_threads(threads);
    workers_.reserve(static_cast<std::size_t>(n - 1));
    for (int w = 1; w < n; ++w) workers_.emplace_back([this, w] { work(w); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
}

void ThreadPool::drain(int worker) {
    for (int t = next_.fetch_add(1, std::memory_order_relaxed); t < tasks_;
         t = next_.fetch_add(1, std::memory_order_relaxed))
        call_(ctx_, t, worker);
}

void ThreadPool::dispatch(int tasks, Call call, void* ctx) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        call_ = call;
        ctx_ = ctx;
        tasks_ = tasks;
        next_.store(0, std::memory_order_relaxed);
        busy_ = static_cast<int>(workers_.size());
        ++generation_;
    }
    wake_.notify_all();
    drain(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return busy_ == 0; });
}

void ThreadPool::work(int worker) {
    std::uint64_t seen = 0;
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
        }
        drain(worker);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (--busy_ == 0) done_.notify_one();
        }
    }
}

}  // namespace kestrel::detail
