// custom_pipeline: Kestrel's asynchronous API inside the user's own CUDA pipeline.
//
// Per frame, with no host synchronization until the results are needed:
//   CPU            decodes frame i+1 into the other pinned buffer (double buffering) while the GPU works
//   user stream    uploads frame i from pinned memory, runs the user's own kernels: a gamma curve that
//                  produces the image Kestrel tracks on, and an intensity histogram (auto-exposure,
//                  say), copied back into pinned memory; records an event once the gamma image is ready
//   Kestrel stream waits for that event only (not for the histogram), then FeatureTracker::track_async
//                  enqueues pyramid + LK + result download and returns at once
//   results        tracker.finish() waits for Kestrel's stream (and re-detects when needed);
//                  cudaEventSynchronize(histogram_ready) waits for the user's results
// The device image Kestrel reads (DeviceView of the user's buffer) must not be overwritten before
// finish() returned: here the next frame's gamma kernel is enqueued after finish().
//
// Without a CUDA device (or with --backend cpu) the same loop runs on the CPU: the user's work on
// the host and FeatureTracker's CPU reference (track_async does the work; finish() returns it).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/frame_source.hpp"
#include "common/options.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/error.hpp"
#include "kestrel/feature_tracker.hpp"

using namespace kestrel_examples;

#define CHECK_CUDA(call)                                                                            \
    do {                                                                                            \
        const cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess)                                                                      \
            throw std::runtime_error(std::string(#call) + " failed: " + cudaGetErrorString(e_));   \
    } while (0)

namespace {

const char* kUsage =
    "usage: custom_pipeline [SOURCE] [options]\n"
    "Kestrel's tracker on its own CUDA stream beside the user's own kernels (gamma curve, histogram),\n"
    "with pinned double-buffered uploads and no synchronization until the results are needed.\n"
    "SOURCE as for track_sequence (default: the vtest.avi frames).\n"
    "  --max-frames N         stop after N frames (default 30)\n"
    "  --gamma G              the user's gamma curve, out = 255 (in / 255)^G (default 0.8)\n"
    "  --csv PATH             write the tracks: frame,timestamp,id,x,y,level,status\n";

constexpr int kBins = 16;

// ---- the user's own kernels -----------------------------------------------------------------------
__global__ void user_gamma(const unsigned char* in, size_t in_pitch, unsigned char* out, size_t out_pitch,
                           const unsigned char* lut, int w, int h) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * out_pitch + x] = lut[in[y * in_pitch + x]];
}

__global__ void user_histogram(const unsigned char* in, size_t pitch, int w, int h, unsigned int* hist) {
    __shared__ unsigned int local[kBins];
    const int t = threadIdx.y * blockDim.x + threadIdx.x;
    if (t < kBins) local[t] = 0;
    __syncthreads();
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) atomicAdd(&local[in[y * pitch + x] * kBins / 256], 1u);
    __syncthreads();
    if (t < kBins) atomicAdd(&hist[t], local[t]);
}

std::vector<unsigned char> gamma_lut(float g) {
    std::vector<unsigned char> lut(256);
    for (int i = 0; i < 256; ++i) lut[i] = static_cast<unsigned char>(std::lround(255.0 * std::pow(i / 255.0, g)));
    return lut;
}

double mean_of_histogram(const unsigned int* hist) {
    double n = 0, s = 0;
    for (int b = 0; b < kBins; ++b) {
        n += hist[b];
        s += hist[b] * (b + 0.5) * 256.0 / kBins;
    }
    return n > 0 ? s / n : 0.0;
}

struct Output {
    std::FILE* csv = nullptr;
    long long tracks = 0;
    void write(int frame, long long ts, const std::vector<kestrel::Track>& live) {
        tracks += static_cast<long long>(live.size());
        if (!csv) return;
        const std::string t = seconds_text(ts);
        for (const kestrel::Track& k : live)
            std::fprintf(csv, "%d,%s,%llu,%.4f,%.4f,%d,%s\n", frame, t.c_str(), static_cast<unsigned long long>(k.id),
                         k.x, k.y, k.level, kestrel::to_string(k.status));
    }
};

// ---- GPU: the pipeline ----------------------------------------------------------------------------
int run_gpu(FrameSource& src, Frame first, const kestrel::TrackerConfig& cfg, float gamma, int max_frames, Output& out) {
    const int w = first.image.width(), h = first.image.height();
    // Everything is allocated up front; the loop below allocates nothing.
    cudaStream_t user_stream, kestrel_stream;
    CHECK_CUDA(cudaStreamCreateWithFlags(&user_stream, cudaStreamNonBlocking));
    CHECK_CUDA(cudaStreamCreateWithFlags(&kestrel_stream, cudaStreamNonBlocking));
    cudaEvent_t gamma_ready, histogram_ready;
    CHECK_CUDA(cudaEventCreateWithFlags(&gamma_ready, cudaEventDisableTiming));
    CHECK_CUDA(cudaEventCreateWithFlags(&histogram_ready, cudaEventDisableTiming));
    kestrel::PinnedImage pinned[2] = {kestrel::PinnedImage(w, h), kestrel::PinnedImage(w, h)};
    kestrel::DeviceImage raw(w, h), tracked_image(w, h);  // the user's device buffers
    unsigned char* d_lut = nullptr;
    unsigned int *d_hist = nullptr, *h_hist = nullptr;
    CHECK_CUDA(cudaMalloc(&d_lut, 256));
    CHECK_CUDA(cudaMalloc(&d_hist, kBins * sizeof(unsigned int)));
    CHECK_CUDA(cudaMallocHost(&h_hist, kBins * sizeof(unsigned int)));
    const std::vector<unsigned char> lut = gamma_lut(gamma);
    CHECK_CUDA(cudaMemcpy(d_lut, lut.data(), 256, cudaMemcpyHostToDevice));
    kestrel::FeatureTracker tracker(w, h, cfg, kestrel::Backend::Cuda);

    std::memcpy(pinned[0].data(), first.image.data(), static_cast<std::size_t>(w) * h);
    long long stamp[2] = {first.timestamp_ns, 0};
    const dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
    int n = 0;
    for (bool more = true; more && n < max_frames; ++n) {
        const int cur = n & 1;
        // User stream: upload (truly asynchronous: pinned source), the user's kernels, histogram back.
        kestrel::copy_async(pinned[cur].view(), raw.mut_view(), user_stream);
        user_gamma<<<grid, block, 0, user_stream>>>(raw.view().data, raw.pitch(), tracked_image.mut_view().data,
                                                    tracked_image.pitch(), d_lut, w, h);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaEventRecord(gamma_ready, user_stream));
        CHECK_CUDA(cudaMemsetAsync(d_hist, 0, kBins * sizeof(unsigned int), user_stream));
        user_histogram<<<grid, block, 0, user_stream>>>(raw.view().data, raw.pitch(), w, h, d_hist);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaMemcpyAsync(h_hist, d_hist, kBins * sizeof(unsigned int), cudaMemcpyDeviceToHost, user_stream));
        CHECK_CUDA(cudaEventRecord(histogram_ready, user_stream));

        // Kestrel stream: starts when the gamma image is ready, runs beside the histogram.
        CHECK_CUDA(cudaStreamWaitEvent(kestrel_stream, gamma_ready, 0));
        tracker.track_async(tracked_image.view(), kestrel_stream);

        // CPU, meanwhile: decode the next frame into the other pinned buffer. Its last upload (frame
        // n-1) is complete: we waited for histogram_ready, recorded after it, in the last iteration.
        Frame next;
        more = n + 1 < max_frames && src.next(next);
        if (more) {
            if (next.image.width() != w || next.image.height() != h) throw std::runtime_error("frame size changed");
            std::memcpy(pinned[cur ^ 1].data(), next.image.data(), static_cast<std::size_t>(w) * h);
            stamp[cur ^ 1] = next.timestamp_ns;
        }

        // Now the results are needed: the only waits of the loop.
        const std::vector<kestrel::Track>& live = tracker.finish();
        CHECK_CUDA(cudaEventSynchronize(histogram_ready));
        out.write(n, stamp[cur], live);
        std::printf("frame %3d: %4zu tracks%s, mean intensity %.1f (user's histogram)\n", n, live.size(),
                    tracker.redetected() ? " (re-detected)" : "", mean_of_histogram(h_hist));
    }
    cudaFreeHost(h_hist);
    cudaFree(d_hist);
    cudaFree(d_lut);
    cudaEventDestroy(histogram_ready);
    cudaEventDestroy(gamma_ready);
    cudaStreamDestroy(kestrel_stream);
    cudaStreamDestroy(user_stream);
    return n;
}

// ---- CPU: the same loop, the user's work on the host ----------------------------------------------
int run_cpu(FrameSource& src, Frame first, const kestrel::TrackerConfig& cfg, float gamma, int max_frames, Output& out) {
    const int w = first.image.width(), h = first.image.height();
    const std::vector<unsigned char> lut = gamma_lut(gamma);
    kestrel::HostImage tracked_image(w, h);
    kestrel::FeatureTracker tracker(w, h, cfg, kestrel::Backend::Cpu);
    Frame frame = std::move(first);
    int n = 0;
    for (bool more = true; more && n < max_frames; ++n) {
        unsigned int hist[kBins] = {};
        for (std::size_t i = 0; i < static_cast<std::size_t>(w) * h; ++i) {
            tracked_image.data()[i] = lut[frame.image.data()[i]];
            ++hist[frame.image.data()[i] * kBins / 256];
        }
        tracker.track_async(tracked_image.view(), nullptr);  // CPU backend: does the work here
        const std::vector<kestrel::Track>& live = tracker.finish();
        out.write(n, frame.timestamp_ns, live);
        std::printf("frame %3d: %4zu tracks%s, mean intensity %.1f (user's histogram)\n", n, live.size(),
                    tracker.redetected() ? " (re-detected)" : "", mean_of_histogram(hist));
        more = n + 1 < max_frames && src.next(frame);
        if (more && (frame.image.width() != w || frame.image.height() != h))
            throw std::runtime_error("frame size changed");
    }
    return n;
}

int run(int argc, char** argv) {
    Args args(argc, argv, option_flags());
    if (args.flag("help")) {
        std::printf("%s%s%s", kUsage, backend_help(), tracker_help().c_str());
        return 0;
    }
    const bool explicit_backend = args.has("backend");
    const kestrel::Backend backend = parse_backend(args);
    const kestrel::TrackerConfig cfg = parse_tracker(args);
    const int max_frames = args.get_int("max-frames", 30);
    const float gamma = args.get_float("gamma", 0.8f);
    const std::string csv_path = args.get("csv", "");
    args.reject_unknown();
    if (args.positional().size() > 1) throw UsageError("at most one SOURCE");
    if (!(gamma > 0.0f && gamma <= 10.0f)) throw UsageError("--gamma must be in (0, 10]");
    if (max_frames < 1) throw UsageError("--max-frames must be >= 1");

    auto src = open_source(args.positional().empty() ? "" : args.positional()[0]);
    std::printf("source: %s\n%s\n", src->describe().c_str(), backend_line(backend, explicit_backend).c_str());
    Frame first;
    if (!src->next(first)) throw std::runtime_error("the source gave no frames");

    Output out;
    if (!csv_path.empty()) {
        out.csv = std::fopen(csv_path.c_str(), "w");
        if (!out.csv) throw std::runtime_error("cannot write " + csv_path);
        std::fprintf(out.csv, "frame,timestamp,id,x,y,level,status\n");
    }
    const int n = backend == kestrel::Backend::Cuda ? run_gpu(*src, std::move(first), cfg, gamma, max_frames, out)
                                                    : run_cpu(*src, std::move(first), cfg, gamma, max_frames, out);
    if (out.csv) std::fclose(out.csv);
    std::printf("processed %d frames, %.1f tracks per frame\n", n, static_cast<double>(out.tracks) / n);
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_example("custom_pipeline", kUsage, run, argc, argv); }
