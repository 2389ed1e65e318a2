// kestrel_microbench, GPU rows: the floor, pyramid and score maps alone, the detector (device only
// and end to end), the tracker (device only, and whole FeatureTracker frames), the batch unprojection. Each skips with a
// message on a machine without a CUDA device.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "kernels/common/cuda_check.hpp"
#include "kestrel/fast.hpp"
#include "kestrel/pyramid.hpp"
#include "kestrel/relative_pose.hpp"
#include "microbench.hpp"
#if KESTREL_BENCH_TRACKER
#include "kestrel/feature_tracker.hpp"
#include "kestrel/multi_camera_tracker.hpp"
#endif

namespace kestrel::bench::micro {

void device_loop(benchmark::State& st, const std::function<void(cudaStream_t)>& enqueue) {
    if (!g_gpu) {
        st.SkipWithError(kNoGpu);
        return;
    }
    KESTREL_CUDA(cudaDeviceSynchronize(), "microbench: set-up");  // set-up copies on the legacy stream
    Stream s;
    EventRow ev(2);
    for (int i = 0; i < 2; ++i) {  // untimed: allocation, then CUDA-graph capture; one frame in flight
        enqueue(s.get());
        s.sync("microbench: first calls");
    }
    std::vector<double> us;
    for (auto _ : st) {
        launch_spin(kSpinUs, s.get());
        ev.record(0, s.get());
        enqueue(s.get());
        ev.record(1, s.get());
        const double t = ev.us(0, 1);
        us.push_back(t);
        st.SetIterationTime(t * 1e-6);
    }
    set_stats(st, us);
}

void gpu_wall_loop(benchmark::State& st, const std::function<void()>& call) {
    if (!g_gpu) {
        st.SkipWithError(kNoGpu);
        return;
    }
    KESTREL_CUDA(cudaDeviceSynchronize(), "microbench: set-up");
    wall_loop(st, call);
}


void register_pose_floor() {
    // The relative-pose end-to-end row's transfer floor: H2D of 1000 point pairs (4 doubles each, from pinned
    // memory), D2H of the inlier mask (1000 bytes) and of the model (256 bytes), one sync.
    add("floor/pose-transfer/1000", 1000, [](benchmark::State& st) {
        if (!g_gpu) return st.SkipWithError(kNoGpu);
        constexpr std::size_t kIn = 1000 * 4 * sizeof(double), kMask = 1000, kModel = 256;
        PinnedBuffer h_in(kIn, false), h_out(kMask + kModel, false);
        DeviceBuffer d_in(kIn), d_out(kMask + kModel);
        std::memset(h_in.get(), 0, kIn);
        Stream s;
        gpu_wall_loop(st, [&] {
            KESTREL_CUDA(cudaMemcpyAsync(d_in.get(), h_in.get(), kIn, cudaMemcpyHostToDevice, s.get()), "floor");
            KESTREL_CUDA(cudaMemcpyAsync(h_out.get(), d_out.get(), kMask, cudaMemcpyDeviceToHost, s.get()), "floor");
            KESTREL_CUDA(cudaMemcpyAsync(static_cast<char*>(h_out.get()) + kMask, static_cast<char*>(d_out.get()) + kMask,
                                         kModel, cudaMemcpyDeviceToHost, s.get()),
                         "floor");
            s.sync("floor");
        });
    });
}

#if defined(KESTREL_POSE_PROFILE)
void pose_profile_counters(benchmark::State& st, bool reset);  // microbench_geometry.cpp
#define KESTREL_POSE_PF(st, reset) pose_profile_counters(st, reset)
#else
#define KESTREL_POSE_PF(st, reset) ((void)0)
#endif

void register_pose_gpu() {
    // The tracker's entry: 1000 float bearings (from the pose rows' scene) already on the device, the mask and the
    // record left in device memory; timed to the end of the stream (no host copy).
    add("pose/bearings-device/1000/50pct", 300, [](benchmark::State& st) {
        if (!g_gpu) return st.SkipWithError(kNoGpu);
        const int n = 1000;
        const PoseScene sc = pose_scene(n, 0.5);
        std::vector<float> b1(3 * n), b2(3 * n);
        for (int i = 0; i < n; ++i) {
            const double* xs[2] = {&sc.x1[2 * i], &sc.x2[2 * i]};
            std::vector<float>* bs[2] = {&b1, &b2};
            for (int v = 0; v < 2; ++v) {
                const double x = xs[v][0], y = xs[v][1], l = std::sqrt(x * x + y * y + 1.0);
                (*bs[v])[3 * i] = static_cast<float>(x / l);
                (*bs[v])[3 * i + 1] = static_cast<float>(y / l);
                (*bs[v])[3 * i + 2] = static_cast<float>(1.0 / l);
            }
        }
        DeviceBuffer d1(sizeof(float) * b1.size()), d2(sizeof(float) * b2.size());
        KESTREL_CUDA(cudaMemcpy(d1.get(), b1.data(), sizeof(float) * b1.size(), cudaMemcpyHostToDevice), "pose bench");
        KESTREL_CUDA(cudaMemcpy(d2.get(), b2.data(), sizeof(float) * b2.size(), cudaMemcpyHostToDevice), "pose bench");
        RelativePoseConfig cfg;
        cfg.focal_px = 500.0;
        RelativePoseEstimator est(n, cfg, Backend::Cuda);
        PoseDeviceInput in;
        in.bearings1 = static_cast<const float*>(d1.get());
        in.bearings2 = static_cast<const float*>(d2.get());
        in.count = n;
        Stream s;
        KESTREL_POSE_PF(st, true);
        gpu_wall_loop(st, [&] {
            est.estimate_device_async(in, s.get());
            s.sync("pose bench");
        });
        KESTREL_POSE_PF(st, false);
        const RelativePoseResult r = est.finish();
        st.counters["hypotheses"] = r.hypotheses;
        st.counters["inliers"] = r.inliers;
    });
    // The five-point solver's latency: one batch of 256 hypotheses that never stop early (20 random
    // correspondences on the device, a 1e-3 px threshold: only a sample's own points fit), each solved and scored
    // over the 20 points, no refinement, no rotation pass; device time of the one launch (events behind the spin).
    add("pose/solve/five-point/256", 300, [](benchmark::State& st) {
        if (!g_gpu) return st.SkipWithError(kNoGpu);
        const int n = 20;
        std::vector<double> x1(2 * n), x2(2 * n);
        std::uint64_t z = 12345;
        for (double& v : x1) v = 0.6 * (static_cast<double>((z = z * 6364136223846793005ULL + 1442695040888963407ULL) >> 11) / 9007199254740992.0 - 0.5);
        for (double& v : x2) v = 0.6 * (static_cast<double>((z = z * 6364136223846793005ULL + 1442695040888963407ULL) >> 11) / 9007199254740992.0 - 0.5);
        DeviceBuffer d1(sizeof(double) * x1.size()), d2(sizeof(double) * x2.size());
        KESTREL_CUDA(cudaMemcpy(d1.get(), x1.data(), sizeof(double) * x1.size(), cudaMemcpyHostToDevice), "pose bench");
        KESTREL_CUDA(cudaMemcpy(d2.get(), x2.data(), sizeof(double) * x2.size(), cudaMemcpyHostToDevice), "pose bench");
        RelativePoseConfig cfg;
        cfg.threshold_px = 1e-3;
        cfg.confidence = 0.999999999;
        cfg.refine = false;
        cfg.rotation_only = false;
        cfg.max_hypotheses = 256;
        RelativePoseEstimator est(n, cfg, Backend::Cuda);
        PoseDeviceInput in;
        in.normalized1 = static_cast<const double*>(d1.get());
        in.normalized2 = static_cast<const double*>(d2.get());
        in.count = n;
        KESTREL_POSE_PF(st, true);
        device_loop(st, [&](cudaStream_t s) { est.estimate_device_async(in, s); });
        KESTREL_POSE_PF(st, false);
        Stream own;
        est.estimate_device_async(in, own.get());
        const RelativePoseResult r = est.finish();
        st.counters["hypotheses"] = r.hypotheses;
    });
    // The throughput of five-point solves on the GPU: 4096 hypotheses that never stop early (20 random
    // correspondences, a 1e-3 px threshold: only a sample's own points fit), one launch, scoring 20 points per
    // model, end to end from the host; ns_per_solve = the median / 4096.
    add("pose/solve/five-point/4096", 100, [](benchmark::State& st) {
        if (!g_gpu) return st.SkipWithError(kNoGpu);
        const int n = 20;
        std::vector<double> x1(2 * n), x2(2 * n);
        std::uint64_t z = 12345;
        for (double& v : x1) v = 0.6 * (static_cast<double>((z = z * 6364136223846793005ULL + 1442695040888963407ULL) >> 11) / 9007199254740992.0 - 0.5);
        for (double& v : x2) v = 0.6 * (static_cast<double>((z = z * 6364136223846793005ULL + 1442695040888963407ULL) >> 11) / 9007199254740992.0 - 0.5);
        RelativePoseConfig cfg;
        cfg.threshold_px = 1e-3;
        cfg.confidence = 0.999999999;
        cfg.refine = false;
        cfg.rotation_only = false;
        cfg.max_hypotheses = 4096;
        RelativePoseEstimator est(n, cfg, Backend::Cuda);
        gpu_wall_loop(st, [&] { benchmark::DoNotOptimize(est.estimate(x1.data(), x2.data(), n)); });
        const RelativePoseResult r = est.estimate(x1.data(), x2.data(), n);
        st.counters["hypotheses"] = r.hypotheses;
        st.counters["ns_per_solve"] = st.counters["median_us"] * 1000.0 / (r.hypotheses > 0 ? r.hypotheses : 1);
    });
}

void register_gpu() {
    // ---- the floor: what any frame costs on this machine
    for (const char* sz : kSizes) {
        add(std::string("floor/upload+kernel+8KB+sync/") + sz, 1000, [sz](benchmark::State& st) {
            if (!g_gpu) return st.SkipWithError(kNoGpu);
            const HostImage& img = g_frame0.at(sz);
            PinnedImage p = pinned_copy(img);
            DeviceImage d(img.width(), img.height());
            DeviceBuffer small(8192);
            PinnedBuffer host(8192, false);
            Stream s;
            gpu_wall_loop(st, [&] {
                copy_async(p.view(), d.mut_view(), s.get());
                launch_trivial(static_cast<int*>(small.get()), s.get());
                KESTREL_CUDA(cudaMemcpyAsync(host.get(), small.get(), 8192, cudaMemcpyDeviceToHost, s.get()), "floor");
                s.sync("floor");
            });
        });
    }
    add("floor/launch+sync", 1000, [](benchmark::State& st) {
        if (!g_gpu) return st.SkipWithError(kNoGpu);
        DeviceBuffer small(8192);
        Stream s;
        gpu_wall_loop(st, [&] {
            launch_trivial(static_cast<int*>(small.get()), s.get());
            s.sync("launch");
        });
    });

    // The same floor in the device rows' metric (events behind the spin): an empty kernel of 1 block, and
    // empty kernels with the grids of the kernels the targets time at 752x480 (score maps SAD-B: 450 blocks
    // of 256 threads; fused detector: 360 blocks of 256 with its plan's 19 KiB of shared memory each;
    // LK of 200 features: 100 blocks of 64). What remains of a target after these is the kernel's own work.
    struct Grid {
        const char* name;
        int blocks, threads, smem;
    };
    for (const Grid g : {Grid{"1x32", 1, 32, 0}, Grid{"450x256", 450, 256, 0}, Grid{"360x256+19KiB", 360, 256, 19 * 1024},
                         Grid{"100x64", 100, 64, 0}}) {
        add(std::string("floor/empty-kernel/") + g.name + "/device", 1000, [g](benchmark::State& st) {
            if (!g_gpu) return st.SkipWithError(kNoGpu);
            DeviceBuffer out(64);
            device_loop(st, [&](cudaStream_t s) {
                launch_empty_grid(g.blocks, g.threads, g.smem, static_cast<int*>(out.get()), s);
            });
        });
    }

    // ---- pyramid and score maps alone (design goal: 752x480, 2 levels <= 5 us)
    for (const char* sz : {"752x480", "1920x1080"}) {
        add(std::string("pyramid/") + sz + "/2lv", 1000, [sz](benchmark::State& st) {
            if (!g_gpu) return st.SkipWithError(kNoGpu);
            const HostImage& img = g_frame0.at(sz);
            DevicePyramid pyr(img.width(), img.height(), {2, 2.0f});
            copy_async(img.view(), pyr.level0(), nullptr);
            device_loop(st, [&](cudaStream_t s) { pyr.build(s); });
        });
        for (int t = 0; t < 4; ++t) {
            const auto score = static_cast<ScoreType>(t);
            add(std::string("score/") + sz + "/2lv/" + to_string(score), 1000, [sz, score](benchmark::State& st) {
                if (!g_gpu) return st.SkipWithError(kNoGpu);
                const HostImage& img = g_frame0.at(sz);
                const PyramidConfig pc{2, 2.0f};
                DevicePyramid pyr(img.width(), img.height(), pc);
                copy_async(img.view(), pyr.level0(), nullptr);
                pyr.build(nullptr);
                FastConfig fc;
                fc.threshold = 10;
                fc.score = score;
                DeviceScoreMaps maps(pyramid_sizes(img.width(), img.height(), pc), fc);
                if (std::string(sz) == "752x480") st.SetLabel("design goal: <= 5 us device");
                device_loop(st, [&](cudaStream_t s) { maps.compute(pyr, s); });
            });
        }
    }

    // ---- the detector (design goals: device <= 10 us, end to end <= 1.3 x floor at 752x480)
    for (const char* sz : kSizes) {
        for (bool graph : {true, false}) {
            if (!graph && std::string(sz) != "752x480") continue;
            const std::string g = graph ? "" : "/no-graph";
            add(std::string("detector/device/") + sz + g, 1000, [sz, graph](benchmark::State& st) {
                if (!g_gpu) return st.SkipWithError(kNoGpu);
                DetectorConfig c = issue4_detector();
                c.cuda_graph = graph;
                FeatureDetector det(c, Backend::Cuda);
                const DeviceImage d = upload(g_frame0.at(sz).view());
                if (std::string(sz) == "752x480") st.SetLabel("design goal: <= 10 us device");
                device_loop(st, [&](cudaStream_t s) { det.detect_async(d.view(), s); });
                st.counters["keypoints"] = det.host_count();
            });
            add(std::string("detector/end-to-end/") + sz + g, 1000, [sz, graph](benchmark::State& st) {
                if (!g_gpu) return st.SkipWithError(kNoGpu);
                DetectorConfig c = issue4_detector();
                c.cuda_graph = graph;
                FeatureDetector det(c, Backend::Cuda);
                const PinnedImage p = pinned_copy(g_frame0.at(sz));
                Stream s;
                if (std::string(sz) == "752x480") st.SetLabel("design goal: <= 1.3 x floor");
                gpu_wall_loop(st, [&] {
                    det.detect_async(p.view(), s.get());
                    s.sync("detector");
                });
                st.counters["keypoints"] = det.host_count();
            });
        }
    }

    // The detector's kernel paths side by side at 752x480 (KESTREL_DETECTOR_PATH, set while the detector
    // meets its first frame): the fused kernel, score maps + grid NMS, score maps + corner list + selection
    // per corner. The rows above take the path the detector chooses for the SMs present.
    for (const char* path : {"fused", "maps", "list", "list-generic"}) {
        const auto make = [path](DetectorConfig c, const HostImage& img, FeatureDetector*& out) {
            setenv("KESTREL_DETECTOR_PATH", path, 1);
            out = new FeatureDetector(c, Backend::Cuda);
            (void)out->detect(img.view());  // chooses the path, allocates
            unsetenv("KESTREL_DETECTOR_PATH");
        };
        add(std::string("detector/device/752x480/path:") + path, 1000, [path, make](benchmark::State& st) {
            if (!g_gpu) return st.SkipWithError(kNoGpu);
            FeatureDetector* raw = nullptr;
            make(issue4_detector(), g_frame0.at("752x480"), raw);
            std::unique_ptr<FeatureDetector> det(raw);
            const DeviceImage d = upload(g_frame0.at("752x480").view());
            device_loop(st, [&](cudaStream_t s) { det->detect_async(d.view(), s); });
            st.counters["keypoints"] = det->host_count();
        });
        add(std::string("detector/end-to-end/752x480/path:") + path, 1000, [path, make](benchmark::State& st) {
            if (!g_gpu) return st.SkipWithError(kNoGpu);
            FeatureDetector* raw = nullptr;
            make(issue4_detector(), g_frame0.at("752x480"), raw);
            std::unique_ptr<FeatureDetector> det(raw);
            const PinnedImage p = pinned_copy(g_frame0.at("752x480"));
            Stream s;
            gpu_wall_loop(st, [&] {
                det->detect_async(p.view(), s.get());
                s.sync("detector");
            });
            st.counters["keypoints"] = det->host_count();
        });
    }

    // ---- the tracker (design goals: 200 features <= 15 us device; full frame <= 1.4 x floor)
    for (int n : {100, 200, 500}) {
        for (LkMode mode : kModes) {
            add("tracker/device/" + std::to_string(n) + "/" + mode_name(mode), 1000, [n, mode](benchmark::State& st) {
                if (!g_gpu) return st.SkipWithError(kNoGpu);
                LkConfig c;
                c.pyramid = {3, 2.0f};
                c.mode = mode;
                const HostImage& a = g_frame0.at("752x480");
                const HostImage& b = g_frame1.at("752x480");
                DevicePyramid pa(a.width(), a.height(), c.pyramid), pb(b.width(), b.height(), c.pyramid);
                copy_async(a.view(), pa.level0(), nullptr);
                copy_async(b.view(), pb.level0(), nullptr);
                pa.build(nullptr);
                pb.build(nullptr);
                const std::vector<Point2f> pts = feature_points(n);
                const int count = static_cast<int>(pts.size());
                DeviceBuffer dp(pts.size() * sizeof(Point2f) + 1), dr(pts.size() * sizeof(LkResult) + 1);
                KESTREL_CUDA(cudaMemcpy(dp.get(), pts.data(), pts.size() * sizeof(Point2f), cudaMemcpyHostToDevice),
                             "points");
                DeviceLkTracker lk(c, std::max(1, count));
                if (n == 200) st.SetLabel("design goal: <= 15 us device");
                device_loop(st, [&](cudaStream_t s) {
                    lk.track_async(pa, pb, static_cast<const Point2f*>(dp.get()), nullptr,
                                   static_cast<LkResult*>(dr.get()), count, s);
                });
                st.counters["features"] = count;
            });
#if KESTREL_BENCH_TRACKER
            // The tracker frame with anchoring (the default) and, for 200 features, without it; and for 200
            // features in the default mode, the geometric check off and on (TrackerConfig::geometric_check with a
            // 752x480 pinhole camera, f = 458 px; five-point), and on with a gyro-like rotation prior every frame
            // (two-point; the identity: the sequence's camera stands still; target: <= 1.25 x off).
            // Variant 5: every track from its previous position and over every level (TrackerConfig::motion off).
            // Variants 6-9: anchor.interval 1, 2, 3, 4 (the fit schedule; the default row takes the default).
            for (const int variant : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
            const bool anchor = variant != 1;
            if (variant != 0 && n != 200) continue;
            if (variant >= 2 && mode != LkConfig{}.mode) continue;
            static const char* const kSuffix[10] = {"",           "/no-anchor",       "/check-off",  "/check-on",
                                                    "/check-on-prior", "/no-prediction", "/interval:1", "/interval:2",
                                                    "/interval:3", "/interval:4"};
            add("tracker/frame/" + std::to_string(n) + "/" + mode_name(mode) + kSuffix[variant], 500,
                [n, mode, anchor, variant](benchmark::State& st) {
                if (!g_gpu) return st.SkipWithError(kNoGpu);
                TrackerConfig c;
                c.lk.pyramid = {3, 2.0f};
                c.lk.mode = mode;
                c.detector = issue4_detector();
                c.detector.per_cell = n > 360 ? 2 : 1;  // 752x480 has 24 x 15 = 360 cells of 32x32
                c.target_features = n;
                c.anchor.enabled = anchor;
                if (variant >= 6) c.anchor.interval = variant - 5;
                if (variant == 5) {
                    c.motion.constant_velocity = false;
                    c.motion.fewer_levels = false;
                }
                if (variant == 3 || variant == 4) {
                    c.geometric_check.enabled = true;
                    Camera& cam = c.geometric_check.camera;
                    cam.width = 752;
                    cam.height = 480;
                    cam.fx = cam.fy = 458.0;
                    cam.cx = 375.5;
                    cam.cy = 239.5;
                }
                FeatureTracker trk(752, 480, c, Backend::Cuda);
                PinnedImage p(752, 480);
                Stream s;
                std::size_t i = 0;
                int redetections = 0, frames = 0;
                long long live = 0;
                const int period = 2 * static_cast<int>(g_seq752.size()) - 2;
                const auto next = [&] {  // ping-pong through the sequence: continuous motion
                    const int j = static_cast<int>(i++ % static_cast<std::size_t>(std::max(1, period)));
                    const int k = j < static_cast<int>(g_seq752.size()) ? j : period - j;
                    std::memcpy(p.data(), g_seq752[static_cast<std::size_t>(k)].data(), 752 * 480);
                };
                const std::array<double, 9> identity{{1, 0, 0, 0, 1, 0, 0, 0, 1}};
                const std::array<double, 9>* prior = variant == 4 ? &identity : nullptr;
                for (int w = 0; w < 10; ++w) {  // warm-up: tracks exist before timing
                    next();
                    trk.track_async(p.view(), s.get(), nullptr, prior);
                    trk.finish();
                }
                std::vector<double> us;
                for (auto _ : st) {
                    next();
                    const auto t0 = std::chrono::steady_clock::now();
                    trk.track_async(p.view(), s.get(), nullptr, prior);
                    const auto& tracks = trk.finish();
                    const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
                    us.push_back(t);
                    st.SetIterationTime(t * 1e-6);
                    redetections += trk.redetected();
                    live += static_cast<long long>(tracks.size());
                    ++frames;
                }
                set_stats(st, us);
                if (n == 200 && variant == 0) st.SetLabel("design goal: <= 1.4 x floor");
                if (variant == 3) st.SetLabel("design goal: <= 1.6 x check-off");
                if (variant == 4) st.SetLabel("design goal: <= 1.25 x check-off");
                st.counters["redetect_frac"] = frames ? static_cast<double>(redetections) / frames : 0.0;
                st.counters["live_mean"] = frames ? static_cast<double>(live) / frames : 0.0;
            });
            }
#endif
        }
    }

    // ---- several cameras in one submission (MultiCameraTracker): N cameras of 752x480 with 200 tracks each, the
    // tracker frame's configuration; each camera plays the sequence from its own starting frame. Target: 4 cameras
    // <= 2 x 1 camera end to end (the same row with N = 1 is the reference of the same run).
#if KESTREL_BENCH_TRACKER
    // With device_frames the frames are already in device memory (DeviceView, as where the camera writes into
    // memory the GPU reads, e.g. a Jetson's): the row then times the tracking alone, without the host uploads.
    // redetect_frac: the share of frames in which some camera ran its detector; enqueue_us: the median host time of
    // track_async (every camera's submission), the rest of the frame being finish() (the wait and the bookkeeping).
    for (bool device_frames : {false, true}) {
    for (int n_cams : {1, 2, 4, 8}) {
        if (device_frames && n_cams != 1 && n_cams != 4) continue;
        add("tracker/cameras/" + std::to_string(n_cams) + "/752x480/200" + (device_frames ? "/device-frames" : ""), 300,
            [n_cams, device_frames](benchmark::State& st) {
            if (!g_gpu) return st.SkipWithError(kNoGpu);
            CameraConfig cc;
            cc.width = 752;
            cc.height = 480;
            cc.tracker.lk.pyramid = {3, 2.0f};
            cc.tracker.detector = issue4_detector();
            cc.tracker.target_features = 200;
            MultiCameraTracker rig(std::vector<CameraConfig>(static_cast<std::size_t>(n_cams), cc), Backend::Cuda);
            std::vector<PinnedImage> frames;
            for (int c = 0; c < n_cams; ++c) frames.emplace_back(752, 480);
            std::vector<HostView> views;
            for (const PinnedImage& p : frames) views.push_back(p.view());
            std::vector<DeviceImage> on_device;  // device_frames: the whole sequence, uploaded before timing
            if (device_frames)
                for (const auto& f : g_seq752) on_device.push_back(upload(f.view()));
            std::vector<DeviceView> dviews(static_cast<std::size_t>(n_cams));
            Stream s;
            std::size_t i = 0;
            const int period = std::max(1, 2 * static_cast<int>(g_seq752.size()) - 2);
            const auto next = [&] {  // ping-pong through the sequence, camera c offset by 3 c frames
                for (int c = 0; c < n_cams; ++c) {
                    const int j = static_cast<int>((i + 3 * static_cast<std::size_t>(c)) % static_cast<std::size_t>(period));
                    const int k = j < static_cast<int>(g_seq752.size()) ? j : period - j;
                    if (device_frames)
                        dviews[static_cast<std::size_t>(c)] = on_device[static_cast<std::size_t>(k)].view();
                    else
                        std::memcpy(frames[static_cast<std::size_t>(c)].data(),
                                    g_seq752[static_cast<std::size_t>(k)].data(), 752 * 480);
                }
                ++i;
            };
            double enqueue_us = 0.0;  // host time of the last track_async (the submission of every camera)
            const auto submit = [&] {
                const auto e0 = std::chrono::steady_clock::now();
                if (device_frames)
                    rig.track_async(dviews, s.get());
                else
                    rig.track_async(views, s.get());
                enqueue_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - e0).count();
                rig.finish();
            };
            for (int w = 0; w < 10; ++w) {
                next();
                submit();
            }
            std::vector<double> us;
            long long live = 0, redetect_frames = 0;
            std::vector<double> enqueue;
            for (auto _ : st) {
                next();
                const auto t0 = std::chrono::steady_clock::now();
                submit();
                const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
                us.push_back(t);
                enqueue.push_back(enqueue_us);
                st.SetIterationTime(t * 1e-6);
                bool any = false;
                for (int c = 0; c < n_cams; ++c) {
                    live += static_cast<long long>(rig.tracks(c).size());
                    any = any || rig.camera(c).redetected();
                }
                redetect_frames += any ? 1 : 0;
            }
            set_stats(st, us);
            if (n_cams == 4) st.SetLabel("target: <= 2 x the 1-camera row");
            st.counters["live_mean_per_camera"] = us.empty() ? 0.0 : static_cast<double>(live) / us.size() / n_cams;
            st.counters["redetect_frac"] = us.empty() ? 0.0 : static_cast<double>(redetect_frames) / us.size();
            if (!enqueue.empty()) {  // the median host time of track_async: the submission's share of the frame
                std::nth_element(enqueue.begin(), enqueue.begin() + enqueue.size() / 2, enqueue.end());
                st.counters["enqueue_us"] = enqueue[enqueue.size() / 2];
            }
        });
    }
    }
#endif

    // ---- the camera models: a frame's keypoints unprojected (docs/geometry.md), device only and from pinned
    // pixels to pinned results on the host
    for (bool fisheye : {false, true}) {
        for (int n : {200, 2000}) {
            const std::string tag = std::string(fisheye ? "fisheye/" : "radtan/") + std::to_string(n);
            for (bool end_to_end : {false, true}) {
                add(std::string("unproject/") + (end_to_end ? "end-to-end/" : "device/") + tag, 1000,
                    [fisheye, n, end_to_end](benchmark::State& st) {
                        if (!g_gpu) return st.SkipWithError(kNoGpu);
                        const Camera c = bench_camera(fisheye);
                        const std::vector<float> xy = bench_pixels(c, n);
                        PinnedBuffer in(xy.size() * sizeof(float), false);
                        PinnedBuffer out(static_cast<std::size_t>(n) * sizeof(Point2d), false);
                        PinnedBuffer status(static_cast<std::size_t>(n) * sizeof(UnprojectStatus), false);
                        std::memcpy(in.get(), xy.data(), xy.size() * sizeof(float));
                        DeviceUnprojector dev(c, n);
                        const auto enqueue = [&](StreamHandle s) {
                            dev.unproject_async(static_cast<const float*>(in.get()), n, static_cast<Point2d*>(out.get()),
                                                static_cast<UnprojectStatus*>(status.get()), s);
                        };
                        if (!end_to_end) {
                            device_loop(st, [&](cudaStream_t s) { enqueue(s); });
                            return;
                        }
                        Stream s;
                        gpu_wall_loop(st, [&] {
                            enqueue(s.get());
                            s.sync("unproject");
                        });
                    });
            }
        }
    }
}

}  // namespace kestrel::bench::micro
