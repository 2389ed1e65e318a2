// bench_gpu.hpp in a build without CUDA (KESTREL_WITH_CUDA=OFF), in place of bench_gpu.cu: there is never
// a GPU, so the bench runs its CPU rows only; the GPU helpers the CPU-only code still names throw.
#include "bench_gpu.hpp"
#include "kestrel/error.hpp"

namespace kestrel::bench {

namespace {
[[noreturn]] void no_cuda(const char* what) {
    throw NoDeviceError(std::string("kestrel bench: ") + what + ": this build has no CUDA backend (KESTREL_WITH_CUDA=OFF)");
}
}  // namespace

std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }
GpuInfo query_gpu(int device) {
    GpuInfo g;
    g.device = device;  // present = false: no GPU in a build without CUDA
    return g;
}
double measure_sm_clock(StreamHandle, double) { no_cuda("measure_sm_clock"); }
std::string throttle_warning(const GpuInfo&) { return ""; }
SmLimit::SmLimit(int, int sms) : requested_(sms) { no_cuda("--sm-count"); }
SmLimit::~SmLimit() = default;
bool SmLimit::current() const { return false; }
int distinct_sms(int, double, StreamHandle) { no_cuda("distinct_sms"); }

}  // namespace kestrel::bench
