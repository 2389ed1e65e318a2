// Internal: the CPU backend's worker threads. A pool is owned by one detector or tracker object, created
// with it (no thread is created per frame) and shared with nothing else: two objects on two threads never
// touch each other's workers. run(tasks, f) calls f(task, worker) once for every task in [0, tasks), on the
// calling thread and the pool's workers, and returns when all are done. Which worker runs which task is not
// fixed, so callers make every task write only its own outputs (results never depend on the thread count);
// `worker` (in [0, size())) indexes per-worker scratch memory.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace kestrel::detail {

/// threads = 0: the hardware threads (std::thread::hardware_concurrency(), at least 1); else threads.
int resolve_threads(int threads);

class ThreadPool {
public:
    /// `threads` in total, the calling thread included (threads - 1 workers are started; 1: none).
    explicit ThreadPool(int threads);
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;
    ~ThreadPool();

    int size() const { return static_cast<int>(workers_.size()) + 1; }

    template <class F>
    void run(int tasks, F&& f) {
        if (tasks <= 0) return;
        if (workers_.empty() || tasks == 1) {
            for (int t = 0; t < tasks; ++t) f(t, 0);
            return;
        }
        using Fn = std::remove_reference_t<F>;
        dispatch(tasks, [](void* ctx, int task, int worker) { (*static_cast<Fn*>(ctx))(task, worker); },
                 static_cast<void*>(&f));
    }

private:
    using Call = void (*)(void*, int, int);
    void dispatch(int tasks, Call call, void* ctx);
    void work(int worker);
    void drain(int worker);

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    std::uint64_t generation_ = 0;  // one per run(); workers wait for a new one
    bool stop_ = false;
    Call call_ = nullptr;
    void* ctx_ = nullptr;
    int tasks_ = 0;
    std::atomic<int> next_{0};  // next task to hand out
    int busy_ = 0;              // workers still inside the current run
};

/// A contiguous split of [0, n) into `parts` ranges: part p is [begin(p), begin(p + 1)).
inline int split_begin(int n, int parts, int p) {
    return static_cast<int>(static_cast<std::int64_t>(n) * p / parts);
}

}  // namespace kestrel::detail
