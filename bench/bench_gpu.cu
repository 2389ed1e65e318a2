// Bench-only CUDA helpers (see bench_gpu.hpp). Nothing here is part of the library.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench_gpu.hpp"
#include "kernels/common/cuda_check.hpp"

namespace kestrel::bench {
namespace {

__device__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void trivial_kernel(int* out) { out[threadIdx.x] = static_cast<int>(threadIdx.x); }

__global__ void empty_grid_kernel(int* out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = static_cast<int>(gridDim.x);
}

__global__ void spin_kernel(unsigned long long ns) {
    const unsigned long long t0 = global_ns();
    while (global_ns() - t0 < ns) {
    }
}

// out[0] = SM cycles (clock64), out[1] = nanoseconds (%globaltimer) over the same spin.
__global__ void clock_kernel(unsigned long long ns, unsigned long long* out) {
    const unsigned long long t0 = global_ns();
    const long long c0 = clock64();
    unsigned long long t1 = t0;
    while (t1 - t0 < ns) t1 = global_ns();
    const long long c1 = clock64();
    out[0] = static_cast<unsigned long long>(c1 - c0);
    out[1] = t1 - t0;
}

std::string read_line(const std::filesystem::path& p) {
    std::ifstream f(p);
    std::string s;
    std::getline(f, s);
    return s;
}

// Jetson: the GPU's devfreq node (names differ per chip: gk20a, gp10b, gv11b, ga10b, gpu-gpc-0 ...).
std::string jetson_devfreq() {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (const char* root : {"/sys/devices/gpu.0/devfreq", "/sys/class/devfreq"}) {
        for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            const bool gpu = std::string(root).find("gpu.0") != std::string::npos ||
                             name.find("gpu") != std::string::npos || name.find("gv11b") != std::string::npos ||
                             name.find("ga10b") != std::string::npos || name.find("gp10b") != std::string::npos;
            if (!gpu) continue;
            const std::string cur = read_line(it->path() / "cur_freq"), max = read_line(it->path() / "max_freq");
            if (cur.empty() || max.empty()) continue;
            try {
                std::ostringstream os;
                os << std::stoll(cur) / 1000000 << "/" << std::stoll(max) / 1000000 << " MHz (" << name << ")";
                return os.str();
            } catch (...) {
                continue;
            }
        }
    }
    return {};
}

}  // namespace

std::string cuda_version_text(int v) {
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

GpuInfo query_gpu(int device) {
    GpuInfo g;
    g.device = device;
    cudaRuntimeGetVersion(&g.runtime_version);
    cudaDriverGetVersion(&g.driver_version);
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || device < 0 || device >= n) {
        cudaGetLastError();
        return g;
    }
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
        cudaGetLastError();
        return g;
    }
    g.present = true;
    g.name = p.name;
    g.cc_major = p.major;
    g.cc_minor = p.minor;
    g.sm_count = p.multiProcessorCount;
    g.integrated = p.integrated != 0;
    g.can_map_host = p.canMapHostMemory != 0;
    g.total_mem_gib = static_cast<double>(p.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0);
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) == cudaSuccess) g.peak_sm_mhz = khz / 1000.0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess) g.peak_mem_mhz = khz / 1000.0;
    cudaGetLastError();
    if (g.integrated) g.devfreq = jetson_devfreq();
    return g;
}

double measure_sm_clock(cudaStream_t stream, double ms) {
    DeviceBuffer d(2 * sizeof(unsigned long long));
    unsigned long long h[2] = {0, 0};
    clock_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(ms * 1e6),
                                      static_cast<unsigned long long*>(d.get()));
    KESTREL_CUDA_LAUNCH("bench: clock probe");
    KESTREL_CUDA(cudaMemcpyAsync(h, d.get(), sizeof h, cudaMemcpyDeviceToHost, stream), "bench: clock probe");
    KESTREL_CUDA(cudaStreamSynchronize(stream), "bench: clock probe");
    return h[1] > 0 ? static_cast<double>(h[0]) * 1e3 / static_cast<double>(h[1]) : 0.0;
}

std::string throttle_warning(const GpuInfo& g) {
    std::ostringstream os;
    if (g.peak_sm_mhz > 0 && g.measured_sm_mhz > 0 && g.measured_sm_mhz < 0.85 * g.peak_sm_mhz)
        os << "SM clock measured under load " << static_cast<int>(g.measured_sm_mhz) << " MHz is below 85 % of the "
           << "peak " << static_cast<int>(g.peak_sm_mhz) << " MHz: the GPU looks throttled (power/thermal cap, "
           << "power-saving mode, or clocks locked low)";
    if (g.integrated && !g.devfreq.empty()) {
        std::istringstream is(g.devfreq);
        long long cur = 0, max = 0;
        char slash = 0;
        if ((is >> cur >> slash >> max) && max > 0 && cur < max) {
            if (os.tellp() > 0) os << "; ";
            os << "Jetson GPU devfreq " << g.devfreq << " is below its maximum: run `sudo nvpmodel -m 0` and "
               << "`sudo jetson_clocks` for stable figures";
        }
    }
    return os.str();
}

void launch_trivial(int* out, cudaStream_t stream) {
    trivial_kernel<<<1, 32, 0, stream>>>(out);
    KESTREL_CUDA_LAUNCH("bench: trivial kernel");
}

void launch_empty_grid(int blocks, int threads, int smem_bytes, int* out, cudaStream_t stream) {
    empty_grid_kernel<<<blocks, threads, static_cast<std::size_t>(smem_bytes), stream>>>(out);
    KESTREL_CUDA_LAUNCH("bench: empty grid");
}

void launch_spin(double us, cudaStream_t stream) {
    spin_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(us * 1e3));
    KESTREL_CUDA_LAUNCH("bench: spin kernel");
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : n_(bytes) {
    KESTREL_CUDA(cudaMalloc(&p_, bytes), "bench: cudaMalloc");
}
DeviceBuffer::~DeviceBuffer() {
    if (p_) cudaFree(p_);
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
}

PinnedBuffer::PinnedBuffer(std::size_t bytes, bool mapped) : n_(bytes) {
    if (mapped) {
        KESTREL_CUDA(cudaHostAlloc(&p_, bytes, cudaHostAllocMapped), "bench: cudaHostAlloc(mapped)");
        KESTREL_CUDA(cudaHostGetDevicePointer(&dev_, p_, 0), "bench: cudaHostGetDevicePointer");
    } else {
        KESTREL_CUDA(cudaMallocHost(&p_, bytes), "bench: cudaMallocHost");
        dev_ = p_;  // unified addressing: the same address on the device
    }
}
PinnedBuffer::~PinnedBuffer() {
    if (p_) cudaFreeHost(p_);
}
PinnedBuffer::PinnedBuffer(PinnedBuffer&& o) noexcept : p_(o.p_), dev_(o.dev_), n_(o.n_) {
    o.p_ = o.dev_ = nullptr;
    o.n_ = 0;
}
PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(dev_, o.dev_);
    std::swap(n_, o.n_);
    return *this;
}

EventRow::EventRow(int count) : ev_(static_cast<std::size_t>(count), nullptr) {
    for (auto& e : ev_) KESTREL_CUDA(cudaEventCreate(&e), "bench: cudaEventCreate");
}
EventRow::~EventRow() {
    for (auto e : ev_)
        if (e) cudaEventDestroy(e);
}
void EventRow::record(int i, cudaStream_t stream) {
    KESTREL_CUDA(cudaEventRecord(ev_[static_cast<std::size_t>(i)], stream), "bench: cudaEventRecord");
}
double EventRow::us(int i, int j) const {
    KESTREL_CUDA(cudaEventSynchronize(ev_[static_cast<std::size_t>(j)]), "bench: cudaEventSynchronize");
    float ms = 0;
    KESTREL_CUDA(cudaEventElapsedTime(&ms, ev_[static_cast<std::size_t>(i)], ev_[static_cast<std::size_t>(j)]),
                 "bench: cudaEventElapsedTime");
    return 1e3 * static_cast<double>(ms);
}

}  // namespace kestrel::bench
