// Bad input at the entry points of the CUDA objects (docs/bad-input.md, rows "cuda_*"): DevicePyramid,
// DeviceScoreMaps, the stream-ordered copies, FeatureDetector with Backend::Cuda, DeviceLkTracker, HammingMatcher
// and MultiCameraTracker with Backend::Cuda.
// Each bad call must throw InvalidArgument naming the parameter and the bound (StateError for state
// misuse) and leave the object usable: the good call after it is checked against the CPU reference.
// GPU tests (KESTREL_REQUIRE_GPU).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "bad_input_util.hpp"
#include "detector_test_util.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/fast.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/lk_tracker.hpp"
#include "kestrel/matcher.hpp"
#include "kestrel/multi_camera_tracker.hpp"
#include "kestrel/pyramid.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

using test::Case;
using test::invalid;
using test::Row;
using test::state;

const HostImage& frame() {
    static const HostImage img = test::random_image(160, 120, 7);
    return img;
}

DetectorConfig det_cfg() {
    DetectorConfig c;
    c.pyramid = {2, 2.0f};
    return c;
}

// ---- pyramid and score maps: a 160x120 two-level pyramid of frame() ---------------------------------
struct PyrData {
    DeviceImage src = upload(frame().view());
    DevicePyramid pyr{160, 120, {2, 2.0f}};
    DeviceScoreMaps maps{pyramid_sizes(160, 120, {2, 2.0f}), FastConfig{}};
    void expect_builds() {
        pyr.build(src.view(), nullptr);
        maps.compute(pyr, nullptr);
        synchronize(nullptr, "test");
        const auto cpu = build_pyramid_cpu(frame().view(), {2, 2.0f});
        const HostImage l1 = download(pyr.level(1));
        EXPECT_EQ(std::memcmp(l1.data(), cpu[1].data(), 80 * 60), 0) << "level 1 differs from the CPU pyramid";
        EXPECT_EQ(maps.download(1).scores, fast_score_map_cpu(cpu[1].view(), FastConfig{}).scores);
    }
};

Row pyr_row(std::string id, std::string param, std::string text, std::function<void(PyrData&)> bad) {
    auto make = [bad] {
        auto d = std::make_shared<PyrData>();
        d->expect_builds();
        return Case{[d, bad] { bad(*d); }, [d] { d->expect_builds(); }};
    };
    return param.empty() ? state(std::move(id), std::move(text), make)
                         : invalid(std::move(id), std::move(param), std::move(text), make);
}

// ---- detector: one CUDA detector that has already run a frame ----------------------------------------
void expect_detects(FeatureDetector& d) {
    const std::vector<Keypoint> want = detect_cpu(frame().view(), d.config());
    ASSERT_FALSE(want.empty());
    test::expect_same_keypoints(d.detect(frame().view()), want, "detect() after the bad call");
    PinnedImage pinned(160, 120);
    std::memcpy(pinned.data(), frame().data(), 160 * 120);
    d.detect_async(pinned.view(), nullptr);
    synchronize(nullptr, "test");
    test::expect_same_keypoints(std::vector<Keypoint>(d.host_keypoints(), d.host_keypoints() + d.host_count()), want,
                                "detect_async() after the bad call");
}

Row detect_row(std::string id, std::string param, std::string text, DetectorConfig cfg,
               std::function<void(FeatureDetector&)> bad) {
    auto make = [cfg, bad] {
        auto d = std::make_shared<FeatureDetector>(cfg, Backend::Cuda);
        (void)d->detect(frame().view());  // buffers allocated: the bad call meets a working object
        return Case{[d, bad] { bad(*d); }, [d] { expect_detects(*d); }};
    };
    return param.empty() ? state(std::move(id), std::move(text), make)
                         : invalid(std::move(id), std::move(param), std::move(text), make);
}

// ---- LK: frame and frame shifted by (2, 1), device pyramids, three points in device memory ----------
struct LkData {
    LkConfig cfg;
    HostImage a = test::random_image(160, 120, 11), b{160, 120};
    std::vector<HostImage> ref_cpu, cur_cpu;
    DeviceImage da = upload(a.view()), db;  // kept alive until the pyramids are built
    DevicePyramid ref{160, 120, cfg.pyramid}, cur{160, 120, cfg.pyramid};
    std::vector<Point2f> pts{{40.0f, 40.0f}, {80.5f, 60.25f}, {120.0f, 75.0f}};
    Point2f* d_pts = nullptr;
    LkResult* d_res = nullptr;
    DeviceLkTracker tracker{cfg, 8};

    LkData() {
        for (int y = 0; y < 120; ++y)
            for (int x = 0; x < 160; ++x) b.at(x, y) = a.at(std::max(x - 2, 0), std::max(y - 1, 0));
        ref_cpu = build_pyramid_cpu(a.view(), cfg.pyramid);
        cur_cpu = build_pyramid_cpu(b.view(), cfg.pyramid);
        db = upload(b.view());
        ref.build(da.view(), nullptr);
        cur.build(db.view(), nullptr);
        EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_pts), sizeof(Point2f) * 8), cudaSuccess);
        EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_res), sizeof(LkResult) * 8), cudaSuccess);
        EXPECT_EQ(cudaMemcpy(d_pts, pts.data(), sizeof(Point2f) * pts.size(), cudaMemcpyHostToDevice), cudaSuccess);
        synchronize(nullptr, "test");
    }
    ~LkData() {
        (void)cudaFree(d_pts);
        (void)cudaFree(d_res);
    }
    void expect_tracks() {
        tracker.track_async(ref, cur, d_pts, nullptr, d_res, 3, nullptr);
        synchronize(nullptr, "test");
        std::vector<LkResult> got(3);
        ASSERT_EQ(cudaMemcpy(got.data(), d_res, sizeof(LkResult) * 3, cudaMemcpyDeviceToHost), cudaSuccess);
        const std::vector<LkResult> want = lk_track_cpu(ref_cpu, cur_cpu, pts, cfg);
        for (std::size_t i = 0; i < 3; ++i) {
            EXPECT_EQ(got[i].status, want[i].status) << "point " << i;
            EXPECT_EQ(want[i].status, TrackStatus::Tracked) << "point " << i;
            EXPECT_NEAR(got[i].x, want[i].x, 1e-3f) << "point " << i;
            EXPECT_NEAR(got[i].y, want[i].y, 1e-3f) << "point " << i;
            EXPECT_NEAR(got[i].x, pts[i].x + 2.0f, 0.05f) << "point " << i;
        }
    }
};

Row lk_row(std::string id, std::string param, std::string text, std::function<void(LkData&)> bad) {
    auto make = [bad] {
        auto d = std::make_shared<LkData>();
        return Case{[d, bad] { bad(*d); }, [d] { d->expect_tracks(); }};
    };
    return param.empty() ? state(std::move(id), std::move(text), make)
                         : invalid(std::move(id), std::move(param), std::move(text), make);
}

// ---- HammingMatcher on the GPU (capacity 16): 10 queries, each a train descriptor with 2 bits flipped, in device
// memory; the good call matches them on the device and equals match_cpu. ---------------------------------------
struct MatcherData {
    std::vector<OrbDescriptor> q, t;
    std::vector<Point2f> qp, tp;
    OrbDescriptor *dq = nullptr, *dt = nullptr;
    Point2f *dqp = nullptr, *dtp = nullptr;
    HammingMatcher m;
    explicit MatcherData(const MatcherConfig& cfg) : m(cfg, 16, Backend::Cuda) {
        std::uint32_t state = 12345;
        for (int i = 0; i < 12; ++i) {
            OrbDescriptor d;
            for (auto& b : d.bytes) b = static_cast<std::uint8_t>((state = state * 1664525u + 1013904223u) >> 24);
            t.push_back(d);
            tp.push_back({10.0f * i, 5.0f * i});
        }
        for (int i = 0; i < 10; ++i) {
            OrbDescriptor d = t[static_cast<std::size_t>(11 - i)];
            d.bytes[static_cast<std::size_t>(i)] ^= 0x5;
            q.push_back(d);
            qp.push_back(tp[static_cast<std::size_t>(11 - i)]);
        }
        EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&dq), sizeof(OrbDescriptor) * 10), cudaSuccess);
        EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&dt), sizeof(OrbDescriptor) * 12), cudaSuccess);
        EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&dqp), sizeof(Point2f) * 10), cudaSuccess);
        EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&dtp), sizeof(Point2f) * 12), cudaSuccess);
        EXPECT_EQ(cudaMemcpy(dq, q.data(), sizeof(OrbDescriptor) * 10, cudaMemcpyHostToDevice), cudaSuccess);
        EXPECT_EQ(cudaMemcpy(dt, t.data(), sizeof(OrbDescriptor) * 12, cudaMemcpyHostToDevice), cudaSuccess);
        EXPECT_EQ(cudaMemcpy(dqp, qp.data(), sizeof(Point2f) * 10, cudaMemcpyHostToDevice), cudaSuccess);
        EXPECT_EQ(cudaMemcpy(dtp, tp.data(), sizeof(Point2f) * 12, cudaMemcpyHostToDevice), cudaSuccess);
    }
    ~MatcherData() {
        (void)cudaFree(dq);
        (void)cudaFree(dt);
        (void)cudaFree(dqp);
        (void)cudaFree(dtp);
    }
    void expect_matches() {
        const MatcherConfig& c = m.config();
        const bool pos = c.radius > 0 || c.epipolar_band >= 0;
        m.match_async(dq, 10, dt, 12, nullptr, pos ? dqp : nullptr, pos ? dtp : nullptr);
        synchronize(nullptr, "test");
        const std::vector<Match> got(m.host_matches(), m.host_matches() + 10);
        EXPECT_EQ(got, match_cpu(q.data(), 10, t.data(), 12, c, pos ? qp.data() : nullptr, pos ? tp.data() : nullptr));
        for (int i = 0; i < 10; ++i) EXPECT_EQ(got[static_cast<std::size_t>(i)].train, 11 - i) << "query " << i;
        EXPECT_EQ(m.match(q.data(), 10, t.data(), 12, pos ? qp.data() : nullptr, pos ? tp.data() : nullptr), got);
    }
};

Row matcher_row(std::string id, std::string param, std::string text, MatcherConfig cfg,
                std::function<void(MatcherData&)> bad) {
    return invalid(std::move(id), std::move(param), std::move(text), [cfg, bad] {
        auto d = std::make_shared<MatcherData>(cfg);
        return Case{[d, bad] { bad(*d); }, [d] { d->expect_matches(); }};
    });
}

// ---- MultiCameraTracker on the GPU: three cameras on crops of frame(), device frames; the good call tracks two
// frames and equals a CPU MultiCameraTracker, bit for bit (id, position, status). -----------------------------
std::vector<CameraConfig> rig_cameras() {
    std::vector<CameraConfig> c(3);
    for (int i = 0; i < 3; ++i) {
        c[static_cast<std::size_t>(i)].width = 120 + 8 * i;
        c[static_cast<std::size_t>(i)].height = 96 - 4 * i;
        c[static_cast<std::size_t>(i)].tracker.target_features = 40;
    }
    return c;
}

struct RigData {
    std::vector<std::vector<HostImage>> host;    // [frame][camera]
    std::vector<std::vector<DeviceImage>> dev;   // the same on the device
    MultiCameraTracker m{rig_cameras(), Backend::Cuda};
    RigData() {
        for (int k = 0; k < 2; ++k) {
            host.emplace_back();
            dev.emplace_back();
            for (const CameraConfig& c : rig_cameras()) {
                host.back().push_back(test::crop(frame(), 4 + k + c.width / 40, 2 + k, c.width, c.height));
                dev.back().push_back(upload(host.back().back().view()));
            }
        }
    }
    std::vector<DeviceView> views(int k) const {
        std::vector<DeviceView> v;
        for (const DeviceImage& d : dev[static_cast<std::size_t>(k)]) v.push_back(d.view());
        return v;
    }
    /// `seen`: frames the tracker took before (the reference takes them too).
    void expect_tracks(int seen = 0) {
        MultiCameraTracker ref(rig_cameras(), Backend::Cpu);
        for (int k = 0; k < 2; ++k) {
            std::vector<HostView> hv;
            for (const HostImage& h : host[static_cast<std::size_t>(k)]) hv.push_back(h.view());
            if (k < seen) {
                ref.track(hv);
                continue;
            }
            m.track_async(views(k), nullptr);
            m.finish();
            ref.track(hv);
        }
        if (seen > 0) {  // one more frame for both
            std::vector<HostView> hv;
            for (const HostImage& h : host[1]) hv.push_back(h.view());
            ref.track(hv);
            m.track_async(views(1), nullptr);
            m.finish();
        }
        for (int i = 0; i < 3; ++i) {
            const auto &a = m.tracks(i), &b = ref.tracks(i);
            ASSERT_EQ(a.size(), b.size()) << "camera " << i;
            ASSERT_FALSE(a.empty()) << "camera " << i;
            for (std::size_t j = 0; j < a.size(); ++j) {
                EXPECT_EQ(a[j].id, b[j].id) << "camera " << i << " track " << j;
                EXPECT_EQ(a[j].x, b[j].x) << "camera " << i << " track " << j;
                EXPECT_EQ(a[j].y, b[j].y) << "camera " << i << " track " << j;
                EXPECT_EQ(a[j].status, b[j].status) << "camera " << i << " track " << j;
            }
        }
    }
};

Row rig_row(std::string id, std::string param, std::string text, std::function<void(RigData&)> bad,
            bool in_flight = false) {
    auto make = [bad, in_flight] {
        auto d = std::make_shared<RigData>();
        return Case{[d, bad] { bad(*d); }, [d, in_flight] {
                        if (in_flight) d->m.finish();  // frame 0 completes
                        d->expect_tracks(in_flight ? 1 : 0);
                    }};
    };
    return param.empty() ? state(std::move(id), std::move(text), make)
                         : invalid(std::move(id), std::move(param), std::move(text), make);
}

std::vector<Row> cuda_rows() {
    std::vector<Row> r;
    // ---- DevicePyramid / DeviceScoreMaps --------------------------------------------------------------
    r.push_back(pyr_row("cuda_pyramid_level_index", "k", "[0, 1]", [](PyrData& d) { (void)d.pyr.level(2); }));
    r.push_back(pyr_row("cuda_pyramid_build_wrong_size", "image", "160x120", [](PyrData& d) {
        const DeviceImage other(161, 120);
        d.pyr.build(other.view(), nullptr);
    }));
    r.push_back(pyr_row("cuda_pyramid_build_null_image", "image.data", "must not be null",
                        [](PyrData& d) { d.pyr.build(DeviceView{nullptr, 160, 120, 160}, nullptr); }));
    r.push_back(pyr_row("cuda_pyramid_moved_from", "", "DevicePyramid::build", [](PyrData& d) {
        DevicePyramid keep(std::move(d.pyr));
        try {
            d.pyr.build(nullptr);  // NOLINT(bugprone-use-after-move): on purpose
        } catch (...) {
            d.pyr = std::move(keep);
            throw;
        }
        d.pyr = std::move(keep);
    }));
    r.push_back(pyr_row("cuda_score_maps_pyramid_levels", "pyramid", "has 3 levels, expected 2", [](PyrData& d) {
        const DevicePyramid three(160, 120, {3, 2.0f});
        d.maps.compute(three, nullptr);
    }));
    r.push_back(pyr_row("cuda_score_maps_pyramid_size", "pyramid", "size differs", [](PyrData& d) {
        const DevicePyramid other(162, 120, {2, 2.0f});
        d.maps.compute(other, nullptr);
    }));
    r.push_back(pyr_row("cuda_score_maps_download_index", "k", "[0, 1]", [](PyrData& d) { (void)d.maps.download(2); }));
    r.push_back(pyr_row("cuda_score_maps_level_data_index", "k", "[0, 1]",
                        [](PyrData& d) { (void)d.maps.level_data(-1); }));
    r.push_back(pyr_row("cuda_copy_async_size_mismatch", "dst", "must equal src size 160x120", [](PyrData& d) {
        DeviceImage small(159, 120);
        copy_async(frame().view(), small.mut_view(), nullptr);
    }));
    r.push_back(pyr_row("cuda_copy_async_null_dst", "dst.data", "must not be null", [](PyrData&) {
        copy_async(frame().view(), DeviceMutView{nullptr, 160, 120, 160}, nullptr);
    }));
    r.push_back(pyr_row("cuda_download_pitch_below_width", "src.pitch", "must be >= width (160)",
                        [](PyrData& d) { download(DeviceView{d.src.view().data, 160, 120, 100}); }));

    // ---- FeatureDetector, Backend::Cuda -----------------------------------------------------------------
    const DetectorConfig dc = det_cfg();
    const auto& f = frame();
    r.push_back(detect_row("cuda_detect_null_image", "image.data", "must not be null", dc,
                           [](FeatureDetector& d) { d.detect(HostView{nullptr, 160, 120, 160}); }));
    r.push_back(detect_row("cuda_detect_width_zero", "image.width", "[1, 16383]", dc,
                           [&f](FeatureDetector& d) { d.detect(HostView{f.data(), 0, 120, 160}); }));
    r.push_back(detect_row("cuda_detect_pitch_below_width", "image.pitch", "must be >= width (160)", dc,
                           [&f](FeatureDetector& d) { d.detect(HostView{f.data(), 160, 120, 150}); }));
    DetectorConfig bordered = dc;
    bordered.border = 20;
    r.push_back(detect_row("cuda_detect_image_smaller_than_border", "image.width", ">= 2 * border + 7 = 47", bordered,
                           [&f](FeatureDetector& d) { d.detect(HostView{f.data(), 40, 60, 160}); }));
    DetectorConfig deep = dc;
    deep.pyramid.levels = 4;
    r.push_back(detect_row("cuda_detect_image_too_small_for_levels", "levels", "at most 3", deep,
                           [&f](FeatureDetector& d) { d.detect(HostView{f.data(), 40, 40, 160}); }));
    r.push_back(detect_row("cuda_detect_cell_mask_wrong_grid", "masks.cell_grid", "must equal the cell grid 5x4", dc,
                           [](FeatureDetector& d) {
                               const std::vector<std::uint8_t> skip(30, 0);
                               d.detect(frame().view(), {skip.data(), {6, 5}, {}});
                           }));
    r.push_back(detect_row("cuda_detect_pixel_mask_wrong_size", "masks.pixel_mask", "must equal the image size 160x120",
                           dc, [](FeatureDetector& d) {
                               const HostImage mask(160, 119, 1);
                               d.detect(frame().view(), {nullptr, {}, mask.view()});
                           }));
    r.push_back(detect_row("cuda_detect_async_pageable_memory", "pinned_image.data", "page-locked", dc,
                           [](FeatureDetector& d) { d.detect_async(frame().view(), nullptr); }));
    r.push_back(detect_row("cuda_detect_async_null_device_image", "image.data", "must not be null", dc,
                           [](FeatureDetector& d) { d.detect_async(DeviceView{nullptr, 160, 120, 160}, nullptr); }));
    r.push_back(detect_row("cuda_detect_async_device_pitch", "image.pitch", "must be >= width (160)", dc,
                           [](FeatureDetector& d) {
                               const DeviceImage img = upload(frame().view());
                               d.detect_async(DeviceView{img.view().data, 160, 120, 64}, nullptr);
                           }));
    r.push_back(detect_row("cuda_detect_async_cell_mask_wrong_grid", "masks.cell_grid", "must equal the cell grid",
                           dc, [](FeatureDetector& d) {
                               const DeviceImage img = upload(frame().view());
                               const DeviceImage skip(20, 1);  // device bytes; never read
                               d.detect_async(img.view(), nullptr, {skip.view().data, {4, 5}, {}});
                           }));
    r.push_back(detect_row("cuda_detect_async_pixel_mask_wrong_size", "masks.pixel_mask",
                           "must equal the image size 160x120", dc, [](FeatureDetector& d) {
                               const DeviceImage img = upload(frame().view());
                               const DeviceImage mask(80, 60);
                               d.detect_async(img.view(), nullptr, {nullptr, {}, mask.view()});
                           }));
    r.push_back(detect_row("cuda_detector_moved_from", "", "FeatureDetector::detect", dc, [](FeatureDetector& d) {
        FeatureDetector keep(std::move(d));
        try {
            d.detect(frame().view());  // NOLINT(bugprone-use-after-move): on purpose
        } catch (...) {
            d = std::move(keep);
            throw;
        }
        d = std::move(keep);
    }));

    // ---- DeviceLkTracker ---------------------------------------------------------------------------------
    r.push_back(lk_row("cuda_lk_count_above_capacity", "count", "[0, 8]", [](LkData& d) {
        d.tracker.track_async(d.ref, d.cur, d.d_pts, nullptr, d.d_res, 9, nullptr);
    }));
    r.push_back(lk_row("cuda_lk_count_negative", "count", "[0, 8]", [](LkData& d) {
        d.tracker.track_async(d.ref, d.cur, d.d_pts, nullptr, d.d_res, -1, nullptr);
    }));
    r.push_back(lk_row("cuda_lk_null_points", "ref_points", "must not be null", [](LkData& d) {
        d.tracker.track_async(d.ref, d.cur, nullptr, nullptr, d.d_res, 3, nullptr);
    }));
    r.push_back(lk_row("cuda_lk_null_results", "results", "must not be null", [](LkData& d) {
        d.tracker.track_async(d.ref, d.cur, d.d_pts, nullptr, nullptr, 3, nullptr);
    }));
    r.push_back(lk_row("cuda_lk_ref_pyramid_levels", "ref", "LkConfig.pyramid has 3", [](LkData& d) {
        const DevicePyramid two(160, 120, {2, 2.0f});
        d.tracker.track_async(two, d.cur, d.d_pts, nullptr, d.d_res, 3, nullptr);
    }));
    r.push_back(lk_row("cuda_lk_cur_pyramid_scale", "cur", "LkConfig.pyramid has 3", [](LkData& d) {
        const DevicePyramid other(160, 120, {3, 1.5f});
        d.tracker.track_async(d.ref, other, d.d_pts, nullptr, d.d_res, 3, nullptr);
    }));
    r.push_back(lk_row("cuda_lk_cur_frame_size", "cur", "must equal ref's 160x120", [](LkData& d) {
        const DevicePyramid other(100, 100, d.cfg.pyramid);
        d.tracker.track_async(d.ref, other, d.d_pts, nullptr, d.d_res, 3, nullptr);
    }));
    r.push_back(lk_row("cuda_lk_stored_without_first_frame", "", "FirstFrame", [](LkData& d) {
        d.tracker.track_stored_async(d.cur, nullptr, nullptr, d.d_res, 3, nullptr);
    }));
    r.push_back(lk_row("cuda_lk_moved_from", "", "DeviceLkTracker::track_async", [](LkData& d) {
        DeviceLkTracker keep(std::move(d.tracker));
        try {
            d.tracker.track_async(d.ref, d.cur, d.d_pts, nullptr, d.d_res, 3, nullptr);  // NOLINT: on purpose
        } catch (...) {
            d.tracker = std::move(keep);
            throw;
        }
        d.tracker = std::move(keep);
    }));

    // ---- HammingMatcher (Backend::Cuda) ---------------------------------------------------------------------
    MatcherConfig band;
    band.epipolar_band = 2.0f;
    r.push_back(matcher_row("cuda_match_async_n_query_above_capacity", "n_query", "= 17 is outside [0, 16]", {},
                            [](MatcherData& d) { d.m.match_async(d.dq, 17, d.dt, 12, nullptr); }));
    r.push_back(matcher_row("cuda_match_async_train_null", "train", "must not be null when n_train > 0", {},
                            [](MatcherData& d) { d.m.match_async(d.dq, 10, nullptr, 12, nullptr); }));
    r.push_back(matcher_row("cuda_match_async_band_without_positions", "query_pos",
                            "must not be null: the config has a radius or an epipolar band", band,
                            [](MatcherData& d) { d.m.match_async(d.dq, 10, d.dt, 12, nullptr); }));
    r.push_back(matcher_row("cuda_match_n_train_above_capacity", "n_train", "= 17 is outside [0, 16]", {},
                            [](MatcherData& d) { d.m.match(d.q.data(), 10, d.t.data(), 17); }));

    // ---- MultiCameraTracker (Backend::Cuda), device frames -----------------------------------------------------
    r.push_back(rig_row("cuda_multi_camera_two_device_frames", "frames", "has 2 entries, must have one per camera (3)",
                        [](RigData& d) {
                            auto v = d.views(0);
                            v.pop_back();
                            d.m.track_async(v, nullptr);
                        }));
    r.push_back(rig_row("cuda_multi_camera_device_frames_swapped", "frames[1]", "is 136x88, camera 1 is 128x92",
                        [](RigData& d) {
                            auto v = d.views(0);
                            std::swap(v[1], v[2]);
                            d.m.track_async(v, nullptr);
                        }));
    r.push_back(rig_row("cuda_multi_camera_in_flight", "", "the previous frames are still in flight",
                        [](RigData& d) {
                            d.m.track_async(d.views(0), nullptr);
                            d.m.track_async(d.views(0), nullptr);
                        },
                        true));
    return r;
}

class BadInputCuda : public ::testing::TestWithParam<Row> {};

TEST_P(BadInputCuda, ThrowsNamingParameterAndBoundThenWorks) {
    KESTREL_REQUIRE_GPU();
    test::run_row(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Rows, BadInputCuda, ::testing::ValuesIn(cuda_rows()), test::row_name);

// Not an error: stored-template slots outside [0, capacity) come back LostOutOfBounds (checked in the
// kernel, the slots being device memory).
TEST(BadInputCudaStatus, LkStoredSlotsOutOfRangeAreLostOutOfBounds) {
    KESTREL_REQUIRE_GPU();
    LkConfig cfg;
    cfg.template_source = TemplateSource::FirstFrame;
    const HostImage a = test::random_image(160, 120, 11);
    const DeviceImage da = upload(a.view());
    DevicePyramid pyr(160, 120, cfg.pyramid);
    pyr.build(da.view(), nullptr);
    DeviceLkTracker t(cfg, 4);
    const std::vector<std::int32_t> slots{0, -1, 4, 1 << 30};
    const std::vector<Point2f> pts{{40, 40}, {50, 50}, {60, 60}, {70, 70}};
    std::vector<LkGuess> guesses;
    for (const Point2f& p : pts) guesses.push_back({p.x, p.y, 1.0f, 0.0f});
    std::int32_t* d_slots = nullptr;
    Point2f* d_pts = nullptr;
    LkGuess* d_guesses = nullptr;
    LkResult* d_res = nullptr;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_slots), 4 * sizeof(std::int32_t)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_pts), 4 * sizeof(Point2f)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_guesses), 4 * sizeof(LkGuess)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_res), 4 * sizeof(LkResult)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d_slots, slots.data(), 4 * sizeof(std::int32_t), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d_pts, pts.data(), 4 * sizeof(Point2f), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d_guesses, guesses.data(), 4 * sizeof(LkGuess), cudaMemcpyHostToDevice), cudaSuccess);
    t.store_templates_async(pyr, d_pts, d_slots, 4, nullptr);
    t.track_stored_async(pyr, d_slots, d_guesses, d_res, 4, nullptr);
    synchronize(nullptr, "test");
    std::vector<LkResult> res(4);
    ASSERT_EQ(cudaMemcpy(res.data(), d_res, 4 * sizeof(LkResult), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(res[0].status, TrackStatus::Tracked);  // same frame: the template is found where it was stored
    EXPECT_NEAR(res[0].x, 40.0f, 1e-3f);
    for (int i = 1; i < 4; ++i) EXPECT_EQ(res[i].status, TrackStatus::LostOutOfBounds) << "slot " << slots[i];
    for (void* p : {static_cast<void*>(d_slots), static_cast<void*>(d_pts), static_cast<void*>(d_guesses),
                    static_cast<void*>(d_res)})
        EXPECT_EQ(cudaFree(p), cudaSuccess);
}

}  // namespace
}  // namespace kestrel
