// Bench-only CUDA helpers (see bench_gpu.hpp). Nothing here is part of the library.
#include <cuda.h>  // CUDA_VERSION and the driver's green-context types (no libcuda link: see SmLimit)

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

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

// Every block spins `ns` (so that the grid spreads over every SM it may use), then records its SM.
__global__ void smid_kernel(unsigned long long ns, unsigned int* out) {
    const unsigned long long t0 = global_ns();
    while (global_ns() - t0 < ns) {
    }
    if (threadIdx.x == 0) {
        unsigned int id;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
        out[blockIdx.x] = id;
    }
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

int distinct_sms(int blocks, double spin_us, cudaStream_t stream) {
    if (blocks < 1) throw InvalidArgument("blocks", "distinct_sms: blocks must be >= 1");
    DeviceBuffer d(static_cast<std::size_t>(blocks) * sizeof(unsigned int));
    std::vector<unsigned int> h(static_cast<std::size_t>(blocks), 0);
    smid_kernel<<<blocks, 32, 0, stream>>>(static_cast<unsigned long long>(spin_us * 1e3),
                                           static_cast<unsigned int*>(d.get()));
    KESTREL_CUDA_LAUNCH("bench: SM self-check");
    KESTREL_CUDA(cudaMemcpyAsync(h.data(), d.get(), h.size() * sizeof(unsigned int), cudaMemcpyDeviceToHost, stream),
                 "bench: SM self-check");
    KESTREL_CUDA(cudaStreamSynchronize(stream), "bench: SM self-check");
    std::sort(h.begin(), h.end());
    return static_cast<int>(std::unique(h.begin(), h.end()) - h.begin());
}

// ---- SmLimit: a green context. The driver functions come from the runtime's entry-point query (the
// bench links the static runtime only, and a binary that named these symbols directly would not load on
// a driver older than 12.4).
#if CUDA_VERSION >= 12040
namespace {

template <typename F>
F driver_fn(const char* name) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult status{};
#if CUDART_VERSION >= 12050
    const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &p, 12040, cudaEnableDefault, &status);
#else
    const cudaError_t e = cudaGetDriverEntryPoint(name, &p, cudaEnableDefault, &status);
#endif
    if (e != cudaSuccess || status != cudaDriverEntryPointSuccess || p == nullptr) {
        (void)cudaGetLastError();
        int driver = 0;
        cudaDriverGetVersion(&driver);
        throw Error(std::string("--sm-count: the CUDA driver (") + cuda_version_text(driver) + ") has no " + name +
                    ": green contexts need a 12.4 or later driver");
    }
    return reinterpret_cast<F>(p);
}

void check_cu(CUresult r, const char* call) {
    if (r == CUDA_SUCCESS) return;
    const char* text = nullptr;
    using GetErrorString = decltype(&cuGetErrorString);
    try {
        driver_fn<GetErrorString>("cuGetErrorString")(r, &text);
    } catch (const Error&) {
    }
    throw Error(std::string("--sm-count: ") + call + " failed with CUDA driver error " + std::to_string(static_cast<int>(r)) +
                (text ? std::string(" (") + text + ")" : std::string()));
}

}  // namespace

SmLimit::SmLimit(int device, int sms) : requested_(sms) {
    KESTREL_CUDA(cudaSetDevice(device), "bench: --sm-count (cudaSetDevice)");
    KESTREL_CUDA(cudaDeviceGetAttribute(&device_sms_, cudaDevAttrMultiProcessorCount, device), "bench: --sm-count");
    if (sms < 1 || sms > device_sms_)
        throw InvalidArgument("--sm-count", "--sm-count " + std::to_string(sms) + " is out of [1, " +
                                                std::to_string(device_sms_) + "] (the SMs of device " +
                                                std::to_string(device) + ")");
    // The primary context must exist first (cuGreenCtxCreate retains it; the runtime creates it here).
    KESTREL_CUDA(cudaFree(nullptr), "bench: --sm-count (primary context)");
    const auto device_get = driver_fn<decltype(&cuDeviceGet)>("cuDeviceGet");
    const auto get_resource = driver_fn<decltype(&cuDeviceGetDevResource)>("cuDeviceGetDevResource");
    const auto split = driver_fn<decltype(&cuDevSmResourceSplitByCount)>("cuDevSmResourceSplitByCount");
    const auto gen_desc = driver_fn<decltype(&cuDevResourceGenerateDesc)>("cuDevResourceGenerateDesc");
    const auto create = driver_fn<decltype(&cuGreenCtxCreate)>("cuGreenCtxCreate");
    const auto to_ctx = driver_fn<decltype(&cuCtxFromGreenCtx)>("cuCtxFromGreenCtx");
    const auto set_current = driver_fn<decltype(&cuCtxSetCurrent)>("cuCtxSetCurrent");
    const auto destroy = driver_fn<decltype(&cuGreenCtxDestroy)>("cuGreenCtxDestroy");

    CUdevice dev = 0;
    check_cu(device_get(&dev, device), "cuDeviceGet");
    CUdevResource all{};
    check_cu(get_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource(CU_DEV_RESOURCE_TYPE_SM)");
    CUdevResource part{};
    unsigned int groups = 1;
    check_cu(split(&part, &groups, &all, nullptr, 0, static_cast<unsigned int>(sms)),
             ("cuDevSmResourceSplitByCount(1 group of >= " + std::to_string(sms) + " SMs)").c_str());
    if (groups != 1)
        throw Error("--sm-count " + std::to_string(sms) + ": the driver cannot split a group of that many SMs off " +
                    std::to_string(all.sm.smCount) + " (the split rounds up to its granularity; try a smaller count)");
    obtained_ = static_cast<int>(part.sm.smCount);
    CUdevResourceDesc desc = nullptr;
    check_cu(gen_desc(&desc, &part, 1), "cuDevResourceGenerateDesc");
    CUgreenCtx green = nullptr;
    check_cu(create(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
    CUcontext ctx = nullptr;
    try {
        check_cu(to_ctx(&ctx, green), "cuCtxFromGreenCtx");
        check_cu(set_current(ctx), "cuCtxSetCurrent(green context)");
    } catch (...) {
        destroy(green);
        throw;
    }
    green_ = green;
    ctx_ = ctx;
}

bool SmLimit::current() const {
    CUcontext now = nullptr;
    return driver_fn<decltype(&cuCtxGetCurrent)>("cuCtxGetCurrent")(&now) == CUDA_SUCCESS && now != nullptr &&
           now == static_cast<CUcontext>(ctx_);
}

SmLimit::~SmLimit() {
    if (!green_) return;
    try {  // the thread's work ends with the green context: back to the primary context, then destroy it
        cudaDeviceSynchronize();
        driver_fn<decltype(&cuCtxSetCurrent)>("cuCtxSetCurrent")(nullptr);
        driver_fn<decltype(&cuGreenCtxDestroy)>("cuGreenCtxDestroy")(static_cast<CUgreenCtx>(green_));
    } catch (...) {
    }
}
#else
SmLimit::SmLimit(int, int sms) : requested_(sms) {
    throw Error("--sm-count needs green contexts, which need CUDA 12.4 or later: this bench was built with CUDA " +
                cuda_version_text(CUDA_VERSION) + " (rebuild with a 12.4+ toolkit, or run without --sm-count)");
}
SmLimit::~SmLimit() = default;
bool SmLimit::current() const { return false; }
#endif

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
