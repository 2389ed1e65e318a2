// kestrel_microbench, stereo GPU rows: the StereoTracker frame end to end (both frames from pinned host memory
// in, the tracks with their disparities on the host out) and its floor, timed the same way in the same run:
// both uploads, one kernel, the download of 200 stereo tracks' worth, one sync. Design goals of the frame:
// <= 1.6 x floor/stereo-upload and <= 1.3 x tracker/frame/200/gain-offset (the mono frame of the same run).
#include <chrono>
#include <cstring>

#include "kernels/common/cuda_check.hpp"
#include "microbench.hpp"

namespace kestrel::bench::micro {

void register_stereo_gpu() {
    add("floor/stereo-upload", 1000, [](benchmark::State& st) {
        if (!g_gpu) return st.SkipWithError(kNoGpu);
        if (g_seq752.empty()) return st.SkipWithError("no 752x480 sequence");
        const StereoFrames& f = stereo_frames();
        PinnedImage pl = pinned_copy(f.left[0]), pr = pinned_copy(f.right[0]);
        DeviceImage dl(752, 480), dr(752, 480);
        constexpr std::size_t kTracks = 200 * sizeof(StereoTrack);
        DeviceBuffer small(kTracks);
        PinnedBuffer host(kTracks, false);
        Stream s;
        gpu_wall_loop(st, [&] {
            copy_async(pl.view(), dl.mut_view(), s.get());
            copy_async(pr.view(), dr.mut_view(), s.get());
            launch_trivial(static_cast<int*>(small.get()), s.get());
            KESTREL_CUDA(cudaMemcpyAsync(host.get(), small.get(), kTracks, cudaMemcpyDeviceToHost, s.get()), "floor");
            s.sync("floor");
        });
        st.SetLabel("2 x 752x480 up, 1 kernel, 200 stereo tracks down");
    });
#if KESTREL_BENCH_TRACKER
    add("stereo/frame/752x480/200", 500, [](benchmark::State& st) {
        if (!g_gpu) return st.SkipWithError(kNoGpu);
        if (g_seq752.empty()) return st.SkipWithError("no 752x480 sequence");
        const StereoFrames& f = stereo_frames();
        StereoTracker trk(752, 480, stereo_bench_rig(), stereo_bench_config(0), Backend::Cuda);
        PinnedImage pl(752, 480), pr(752, 480);
        Stream s;
        std::size_t i = 0;
        const auto next = [&] {  // ping-pong through the sequence: continuous motion
            const std::size_t k = stereo_index(i++);
            std::memcpy(pl.data(), f.left[k].data(), 752 * 480);
            std::memcpy(pr.data(), f.right[k].data(), 752 * 480);
        };
        for (int w = 0; w < 10; ++w) {  // warm-up: tracks exist before timing
            next();
            trk.track_async(pl.view(), pr.view(), s.get());
            trk.finish();
        }
        std::vector<double> us;
        long long live = 0, matched = 0;
        int redetections = 0;
        for (auto _ : st) {
            next();
            const auto t0 = std::chrono::steady_clock::now();
            trk.track_async(pl.view(), pr.view(), s.get());
            const auto& tracks = trk.finish();
            const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
            us.push_back(t);
            st.SetIterationTime(t * 1e-6);
            live += static_cast<long long>(tracks.size());
            for (const auto& x : tracks) matched += x.status == StereoStatus::Matched;
            redetections += trk.redetected();
        }
        set_stats(st, us);
        st.SetLabel("design goal: <= 1.6 x floor/stereo-upload, <= 1.3 x tracker/frame/200/gain-offset");
        const double n = us.empty() ? 1.0 : static_cast<double>(us.size());
        st.counters["live_mean"] = static_cast<double>(live) / n;
        st.counters["matched_mean"] = static_cast<double>(matched) / n;
        st.counters["redetect_frac"] = static_cast<double>(redetections) / n;
    });
#endif
}

}  // namespace kestrel::bench::micro
