// Bench-only CUDA helpers shared by kestrel_bench and kestrel_microbench: the floor's trivial
// kernel, a spin kernel that keeps the GPU busy while the host enqueues the work to be timed, an
// SM-clock probe, device description, owning buffers and an event timer. Every call is checked
// (kernels/common/cuda_check.hpp: a failure throws kestrel::CudaError naming the stage). No CUDA header:
// the CPU rows build without the toolkit (bench_gpu_nocuda.cpp stands in for bench_gpu.cu there).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "kestrel/device_image.hpp"
#include "kestrel/stream.hpp"

struct CUevent_st;  // CUDA's event type (cudaEvent_t is CUevent_st*): no CUDA header here

namespace kestrel::bench {

/// What the bench reports about the GPU it ran on.
struct GpuInfo {
    bool present = false;
    int device = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0;
    int sm_count = 0;
    bool integrated = false;      ///< cudaDeviceProp::integrated (Jetson: GPU shares the DRAM)
    bool can_map_host = false;    ///< cudaDeviceProp::canMapHostMemory
    double peak_sm_mhz = 0;       ///< cudaDevAttrClockRate (0 when the runtime does not report it)
    double peak_mem_mhz = 0;      ///< cudaDevAttrMemoryClockRate
    double total_mem_gib = 0;
    int runtime_version = 0;      ///< cudaRuntimeGetVersion, e.g. 12040
    int driver_version = 0;       ///< cudaDriverGetVersion
    double measured_sm_mhz = 0;   ///< clock64 cycles / %globaltimer ns during a spin (measure_sm_clock)
    std::string devfreq;          ///< Jetson sysfs GPU devfreq "cur/max MHz" when readable, else empty
};

/// "12.4" from 12040.
std::string cuda_version_text(int v);
/// Describes device `device` (present = false when none is usable; never throws).
GpuInfo query_gpu(int device);
/// Spins one block for `ms` milliseconds and returns the SM clock it ran at (MHz).
double measure_sm_clock(StreamHandle stream, double ms);
/// Human-readable throttle warning, or empty: measured clock below 85 % of the peak, or Jetson devfreq
/// current below its maximum.
std::string throttle_warning(const GpuInfo& g);

/// One <<<1, 32>>> launch that writes 32 ints of `out` (the floor's "trivial kernel").
void launch_trivial(int* out, StreamHandle stream);
/// An empty <<<blocks, threads, smem_bytes>>> launch (block 0's thread 0 writes out[0]): what dispatching a
/// grid of that shape costs on the device, the floor under any kernel of that shape.
void launch_empty_grid(int blocks, int threads, int smem_bytes, int* out, StreamHandle stream);
/// A <<<1, 1>>> kernel that spins until `us` microseconds of GPU time have passed: enqueued before a
/// start event, it holds the stream while the host enqueues the timed work, so that the events then
/// bracket GPU execution only (not host launch gaps).
void launch_spin(double us, StreamHandle stream);

/// All of the calling thread's CUDA work on a part of the GPU: a green context of at least `sms` SMs of
/// `device` (CUDA 12.4+ driver: cuDeviceGetDevResource, cuDevSmResourceSplitByCount,
/// cuDevResourceGenerateDesc, cuGreenCtxCreate), made current on the calling thread (cuCtxFromGreenCtx,
/// cuCtxSetCurrent), after cudaSetDevice(device). From then on every runtime call of the thread uses it: allocations, the streams the
/// bench and the library create (cudaStreamCreate*), the legacy default stream, graphs and events. Create
/// it before any other CUDA object, and call cudaSetDevice no more (that would make
/// the device's primary context current again). The split rounds `sms` up to the device's granularity
/// (on sm_90: multiples of 8); obtained() says what it gave. Throws kestrel::InvalidArgument for an
/// `sms` out of [1, device SMs], kestrel::Error when the build (CUDA < 12.4) or the driver has no green
/// contexts or the driver refuses the split. The driver is reached through the runtime's entry-point
/// query: the bench does not link libcuda.
class SmLimit {
public:
    SmLimit(int device, int sms);
    ~SmLimit();
    SmLimit(const SmLimit&) = delete;
    SmLimit& operator=(const SmLimit&) = delete;
    int requested() const { return requested_; }
    int obtained() const { return obtained_; }
    int device_sms() const { return device_sms_; }
    /// Whether the green context is still the calling thread's current context (a cudaSetDevice since,
    /// e.g. in a third-party library, would have made the primary context current again).
    bool current() const;

private:
    void* green_ = nullptr;  // CUgreenCtx
    void* ctx_ = nullptr;    // its CUcontext
    int requested_ = 0, obtained_ = 0, device_sms_ = 0;
};

/// The self-check of an SM limit: launches `blocks` blocks of 32 threads on `stream`, each spinning
/// `spin_us` microseconds and recording the SM it ran on (%smid), and returns how many distinct SMs
/// they ran on. With blocks well above the device's SM count, an unrestricted GPU reports all its SMs
/// and a green context its own (the driver may add 2 on sm_90 when a module uses dynamic parallelism).
int distinct_sms(int blocks, double spin_us, StreamHandle stream);

/// Owning device allocation (cudaMalloc).
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& o) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    void* get() const { return p_; }
    std::size_t size() const { return n_; }

private:
    void* p_ = nullptr;
    std::size_t n_ = 0;
};

/// Owning page-locked host allocation: cudaMallocHost, or cudaHostAlloc(cudaHostAllocMapped) when
/// `mapped` (zero-copy: device_ptr() is the address kernels read it through).
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    PinnedBuffer(std::size_t bytes, bool mapped);
    ~PinnedBuffer();
    PinnedBuffer(PinnedBuffer&& o) noexcept;
    PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    void* get() const { return p_; }
    void* device_ptr() const { return dev_; }
    std::size_t size() const { return n_; }

private:
    void* p_ = nullptr;
    void* dev_ = nullptr;
    std::size_t n_ = 0;
};

/// Owning non-blocking stream: the library's CudaStream, with sync(stage) (kestrel::synchronize).
class Stream : public CudaStream {
public:
    void sync(const char* stage) const { synchronize(get(), stage); }
};

/// A row of events recorded on one stream; elapsed times between any two (microseconds).
class EventRow {
public:
    explicit EventRow(int count);
    ~EventRow();
    EventRow(const EventRow&) = delete;
    EventRow& operator=(const EventRow&) = delete;
    void record(int i, StreamHandle stream);
    /// Waits for event j, then returns the time from event i to event j in microseconds.
    double us(int i, int j) const;

private:
    std::vector<CUevent_st*> ev_;
};

}  // namespace kestrel::bench
