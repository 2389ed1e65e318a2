// MultiCameraTracker: each camera's live and lost tracks are exactly those of its own FeatureTracker fed the
// same frames, every field by its bits (CPU backend); the CUDA backend, one submission on a caller's stream,
// against the CPU backend in every field of the live and lost tracks (GPU test; bit-identical on x86-64 hosts,
// tests/support/track_compare.hpp); bad input: the bad-input table (tests/core/test_bad_input.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kestrel/device_image.hpp"
#include "kestrel/multi_camera_tracker.hpp"
#include "test_data.hpp"
#include "track_compare.hpp"

namespace kestrel {
namespace {

// Three cameras of different sizes looking at different parts of the same real sequence.
struct Rig {
    std::vector<CameraConfig> cams;
    std::vector<std::vector<HostImage>> frames;  // [frame][camera]
};

Rig make_rig(int n_frames) {
    const auto names = test::sequence_frame_names();
    Rig r;
    const HostImage first = test::real_image(names[0]);
    const int w = first.width(), h = first.height();
    struct Win { int x0, y0, w, h; };
    const Win wins[3] = {{0, 0, w, h}, {w / 5, h / 6, w / 2 + 3, h / 2 + 1}, {w / 3, h / 4, 2 * w / 3 - 7, 3 * h / 4 - 5}};
    for (int c = 0; c < 3; ++c) {
        CameraConfig cc;
        cc.width = wins[c].w;
        cc.height = wins[c].h;
        cc.tracker.target_features = 60 + 40 * c;
        cc.tracker.detector.fast.threshold = 20;
        cc.tracker.redetect_fraction = c == 1 ? 0.9f : 0.3f;  // one camera re-detects often
        cc.tracker.lk.template_source = c == 2 ? TemplateSource::FirstFrame : TemplateSource::PreviousFrame;
        r.cams.push_back(cc);
    }
    for (int f = 0; f < n_frames; ++f) {
        const HostImage img = test::real_image(names[static_cast<std::size_t>(f)]);
        std::vector<HostImage> per;
        for (const Win& v : wins) per.push_back(test::crop(img, v.x0, v.y0, v.w, v.h));
        r.frames.push_back(std::move(per));
    }
    return r;
}

std::vector<HostView> views(const std::vector<HostImage>& imgs) {
    std::vector<HostView> v;
    for (const HostImage& i : imgs) v.push_back(i.view());
    return v;
}

TEST(MultiCameraTrackerCpu, EachCameraMatchesItsOwnFeatureTracker) {
    const Rig rig = make_rig(12);
    MultiCameraTracker multi(rig.cams, Backend::Cpu);
    ASSERT_EQ(multi.size(), 3);
    std::vector<FeatureTracker> single;
    for (const CameraConfig& c : rig.cams) single.emplace_back(c.width, c.height, c.tracker, Backend::Cpu);
    int redetections = 0;
    for (std::size_t f = 0; f < rig.frames.size(); ++f) {
        multi.track(views(rig.frames[f]));
        for (int c = 0; c < 3; ++c) {
            const auto& s = single[static_cast<std::size_t>(c)].track(rig.frames[f][static_cast<std::size_t>(c)].view());
            const std::string what = "camera " + std::to_string(c) + " frame " + std::to_string(f);
            ASSERT_FALSE(s.empty()) << what;
            test::expect_same_tracks(multi.tracks(c), s, true, what);
            test::expect_same_tracks(multi.lost_tracks(c), single[static_cast<std::size_t>(c)].lost_tracks(), true,
                                     what + " lost");
            EXPECT_EQ(multi.camera(c).redetected(), single[static_cast<std::size_t>(c)].redetected()) << what;
            EXPECT_EQ(multi.camera(c).frame_count(), static_cast<std::int64_t>(f + 1)) << what;
            redetections += f > 0 && multi.camera(c).redetected();
        }
    }
    EXPECT_GT(redetections, 0) << "the re-detection path is exercised";
}

// Bad input (camera count and sizes, tracker settings, frames, priors, camera indices, calls out of order): rows
// multi_camera_* of the bad-input table (tests/core/test_bad_input.cpp, docs/bad-input.md).

TEST(MultiCameraTrackerGpu, OneSubmissionMatchesTheCpuBackend) {
    KESTREL_REQUIRE_GPU();
    const Rig rig = make_rig(12);
    MultiCameraTracker gpu(rig.cams, Backend::Cuda), cpu(rig.cams, Backend::Cpu);
    std::vector<PinnedImage> pinned;
    for (const CameraConfig& c : rig.cams) pinned.emplace_back(c.width, c.height);
    std::vector<DeviceImage> dev(rig.cams.size());
    CudaStream stream;
    for (std::size_t f = 0; f < rig.frames.size(); ++f) {
        cpu.track(views(rig.frames[f]));
        const int form = static_cast<int>(f % 3);  // synchronous, pinned on a stream, device frames on a stream
        if (form == 0) {
            gpu.track(views(rig.frames[f]));
        } else if (form == 1) {
            std::vector<HostView> pv;
            for (std::size_t c = 0; c < pinned.size(); ++c) {
                const HostImage& img = rig.frames[f][c];
                std::copy(img.data(), img.data() + static_cast<std::size_t>(img.width()) * img.height(), pinned[c].data());
                pv.push_back(pinned[c].view());
            }
            gpu.track_async(pv, stream.get());
            gpu.finish();
        } else {
            std::vector<DeviceView> dv;
            for (std::size_t c = 0; c < dev.size(); ++c) {
                dev[c] = upload(rig.frames[f][c].view());
                dv.push_back(dev[c].view());
            }
            gpu.track_async(dv, stream.get());
            gpu.finish();
        }
        for (int c = 0; c < 3; ++c) {
            const std::string what = "camera " + std::to_string(c) + " frame " + std::to_string(f);
            EXPECT_EQ(gpu.camera(c).redetected(), cpu.camera(c).redetected()) << what;
            test::expect_same_tracks(gpu.tracks(c), cpu.tracks(c), test::kBitExactHost, what);
            test::expect_same_tracks(gpu.lost_tracks(c), cpu.lost_tracks(c), test::kBitExactHost, what + " lost");
        }
    }
}

}  // namespace
}  // namespace kestrel
