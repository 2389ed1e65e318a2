// validate_against_cpu: runs the GPU stages and their CPU references on the user's images and reports
// every difference. Exit status 0 = no difference, 1 = a difference (or an error), 2 = bad usage.
// Without a CUDA device it runs the CPU side only, says so, and exits 0 (1 when KESTREL_REQUIRE_GPU=1).
//
// Compared (docs/conformance.md):
//   pyramid levels       DevicePyramid vs build_pyramid_cpu            byte for byte
//   FAST score maps      DeviceScoreMaps vs fast_score_maps_cpu        bit for bit
//   keypoints            FeatureDetector(Cuda) detect() and detect_async() (pinned input, non-default
//                        stream, twice: the second call may replay a CUDA graph) vs detect_cpu
//                                                                      exactly, same order
//   LK tracking          DeviceLkTracker track_async (and, with --template first, the stored-template
//                        path) vs lk_track_cpu on
//                        consecutive images of equal size, from the first image's keypoints
//                                                                      status equal; position, gain and
//                                                                      offset within tolerance
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/frame_source.hpp"
#include "common/image_io.hpp"
#include "common/options.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/error.hpp"
#include "kestrel/fast.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/lk_tracker.hpp"
#include "kestrel/pyramid.hpp"

namespace fs = std::filesystem;
using namespace kestrel_examples;

namespace {

const char* kUsage =
    "usage: validate_against_cpu [IMAGE or FOLDER ...] [options]\n"
    "Runs each GPU stage and its CPU reference on the images and reports any difference (exit status 1).\n"
    "Consecutive images of equal size are also tracked from one to the next (LK). Without images: the\n"
    "test data's real photos and vtest.avi frames. Without a GPU: runs the CPU side only and exits 0.\n"
    "  --position-tolerance P largest accepted LK position difference, px (default 1e-3)\n"
    "  --gain-tolerance G     largest accepted LK gain / offset difference (default 1e-4)\n"
    "  --max-points N         LK: track at most N keypoints per pair (default 2048)\n"
    "  --show N               print at most N differences per image (default 5)\n"
    "  --inject-difference    self-test of this tool: changes one CPU value per stage; every stage\n"
    "                         must then report a difference (exit status 1)\n";

std::vector<std::string> default_images() {
    const std::string td = testdata_dir();
    std::vector<std::string> out;
    for (const char* n : {"graf1.png", "graf3.png", "basketball1.png", "basketball2.png", "rubberwhale1.png",
                          "rubberwhale2.png", "box.png", "chessboard.png", "aloeL.png", "vtest_000.png",
                          "vtest_001.png", "vtest_002.png", "vtest_003.png"})
        if (fs::exists(fs::path(td) / n)) out.push_back((fs::path(td) / n).string());
    if (out.empty())
        throw std::runtime_error("no images given and no test data found (build kestrel_testdata or set KESTREL_TEST_DATA)");
    return out;
}

enum Stage { kPyramid, kScores, kKeypoints, kLk, kStages };
const char* const kStageNames[kStages] = {"pyramid", "scores", "keypoints", "lk"};

struct Checker {
    int show = 5;
    long long checks = 0, differences = 0;
    long long by_stage[kStages] = {};
    int shown = 0;
    void begin() { shown = 0; }
    void compare(Stage s, bool equal, const std::string& what) {
        ++checks;
        if (equal) return;
        ++differences;
        ++by_stage[s];
        if (shown++ < show) std::printf("    DIFFERENCE %s\n", what.c_str());
    }
};

std::string kp_text(const kestrel::Keypoint& k) {
    char b[128];
    std::snprintf(b, sizeof b, "(x %.9g, y %.9g, level %d, score %.9g)", k.x, k.y, k.level, k.score);
    return b;
}

void compare_keypoints(Checker& c, const char* what, const std::vector<kestrel::Keypoint>& ref,
                       const kestrel::Keypoint* got, int n) {
    c.compare(kKeypoints, static_cast<int>(ref.size()) == n, std::string(what) + ": " + std::to_string(n) +
                                                     " keypoints, CPU reference " + std::to_string(ref.size()));
    for (int i = 0; i < std::min<int>(n, static_cast<int>(ref.size())); ++i)
        c.compare(kKeypoints, ref[i] == got[i], std::string(what) + " #" + std::to_string(i) + ": " + kp_text(got[i]) +
                                        ", CPU reference " + kp_text(ref[i]));
}

struct Pinned {  // pinned host memory for the LK tracker's inputs and outputs
    void* p = nullptr;
    explicit Pinned(std::size_t bytes) {
        if (cudaMallocHost(&p, bytes) != cudaSuccess) throw std::runtime_error("cudaMallocHost failed");
    }
    ~Pinned() { cudaFreeHost(p); }
    Pinned(const Pinned&) = delete;
    Pinned& operator=(const Pinned&) = delete;
};

struct LkTolerance {
    float position, gain;
};

void compare_lk(Checker& c, const char* what, const std::vector<kestrel::LkResult>& ref, const kestrel::LkResult* got,
                LkTolerance tol, float& max_pos) {
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const kestrel::LkResult& a = ref[i];
        const kestrel::LkResult& b = got[i];
        const bool same_status = a.status == b.status;
        const float dp = std::max(std::fabs(a.x - b.x), std::fabs(a.y - b.y));
        const float dg = std::max(std::fabs(a.gain - b.gain), std::fabs(a.offset - b.offset));
        // Positions are compared where both trackers kept the feature; NaN never passes.
        const bool both_tracked = same_status && a.status == kestrel::TrackStatus::Tracked;
        if (both_tracked && std::isfinite(dp)) max_pos = std::max(max_pos, dp);
        char b_text[256];
        std::snprintf(b_text, sizeof b_text,
                      "%s #%zu: GPU (%.5f, %.5f, gain %.6f, offset %.5f, %s) vs CPU (%.5f, %.5f, gain %.6f, "
                      "offset %.5f, %s)",
                      what, i, b.x, b.y, b.gain, b.offset, kestrel::to_string(b.status), a.x, a.y, a.gain, a.offset,
                      kestrel::to_string(a.status));
        c.compare(kLk, same_status && (!both_tracked || (dp <= tol.position && dg <= tol.gain)), b_text);
    }
}

/// The LK comparison of one image pair: both GPU paths against the CPU reference.
void validate_lk(Checker& c, const kestrel::HostImage& a, const kestrel::HostImage& b,
                 const std::vector<kestrel::Keypoint>& kps, const kestrel::LkConfig& lk, int max_points,
                 LkTolerance tol, bool gpu, bool inject, cudaStream_t stream) {
    const int n = std::min<int>(max_points, static_cast<int>(kps.size()));
    if (n == 0) return;
    std::vector<kestrel::Point2f> pts(n);
    for (int i = 0; i < n; ++i) pts[i] = {kps[i].x, kps[i].y};
    const auto ref_pyr = kestrel::build_pyramid_cpu(a.view(), lk.pyramid);
    const auto cur_pyr = kestrel::build_pyramid_cpu(b.view(), lk.pyramid);
    std::vector<kestrel::LkResult> ref = kestrel::lk_track_cpu(ref_pyr, cur_pyr, pts, lk);
    if (inject)  // self-test: a 0.01 px error in the first tracked point must be reported
        for (kestrel::LkResult& r : ref)
            if (r.status == kestrel::TrackStatus::Tracked) {
                r.x += 0.01f;
                break;
            }
    int tracked = 0;
    for (const auto& r : ref) tracked += r.status == kestrel::TrackStatus::Tracked;
    std::printf("  LK to the next image: %d points, %d tracked (CPU reference)", n, tracked);
    if (!gpu) {
        std::printf("\n");
        return;
    }
    kestrel::DevicePyramid dref(a.width(), a.height(), lk.pyramid), dcur(b.width(), b.height(), lk.pyramid);
    kestrel::copy_async(a.view(), dref.level0(), stream);
    kestrel::copy_async(b.view(), dcur.level0(), stream);
    dref.build(stream);
    dcur.build(stream);
    Pinned p_pts(n * sizeof(kestrel::Point2f)), p_res(n * sizeof(kestrel::LkResult)),
        p_res2(n * sizeof(kestrel::LkResult)), p_slots(n * sizeof(std::int32_t)), p_guess(n * sizeof(kestrel::LkGuess));
    auto* h_pts = static_cast<kestrel::Point2f*>(p_pts.p);
    auto* h_slots = static_cast<std::int32_t*>(p_slots.p);
    auto* h_guess = static_cast<kestrel::LkGuess*>(p_guess.p);
    for (int i = 0; i < n; ++i) {
        h_pts[i] = pts[i];
        h_slots[i] = i;
        h_guess[i] = {pts[i].x, pts[i].y, 1.0f, 0.0f};
    }
    kestrel::DeviceLkTracker trk(lk, n);
    trk.track_async(dref, dcur, h_pts, nullptr, static_cast<kestrel::LkResult*>(p_res.p), n, stream);
    // Stored templates exist with TemplateSource::FirstFrame (--template first): that path too.
    const bool stored = lk.template_source == kestrel::TemplateSource::FirstFrame;
    if (stored) {
        trk.store_templates_async(dref, h_pts, h_slots, n, stream);
        trk.track_stored_async(dcur, h_slots, h_guess, static_cast<kestrel::LkResult*>(p_res2.p), n, stream);
    }
    kestrel::synchronize(stream, "validate_against_cpu: LK");
    float max_pos = 0.0f;
    compare_lk(c, "LK track_async", ref, static_cast<const kestrel::LkResult*>(p_res.p), tol, max_pos);
    if (stored) compare_lk(c, "LK stored templates", ref, static_cast<const kestrel::LkResult*>(p_res2.p), tol, max_pos);
    std::printf("; GPU: largest position difference %.2e px\n", max_pos);
}

int run(int argc, char** argv) {
    Args args(argc, argv, option_flags({"inject-difference"}));
    if (args.flag("help")) {
        std::printf("%s%s%s", kUsage, detector_help().c_str(), lk_help().c_str());
        return 0;
    }
    const kestrel::DetectorConfig dcfg = parse_detector(args);
    const kestrel::LkConfig lk = parse_lk(args);
    const LkTolerance tol{args.get_float("position-tolerance", 1e-3f), args.get_float("gain-tolerance", 1e-4f)};
    const int max_points = args.get_int("max-points", 2048);
    Checker check;
    check.show = args.get_int("show", 5);
    const bool inject = args.flag("inject-difference");
    args.reject_unknown();
    if (max_points < 1 || max_points > 65536) throw UsageError("--max-points must be in [1, 65536]");

    std::vector<std::string> files;
    for (const std::string& p : args.positional()) {
        if (fs::is_directory(p)) {
            const auto in_dir = list_images(p);
            files.insert(files.end(), in_dir.begin(), in_dir.end());
        } else {
            files.push_back(p);
        }
    }
    if (files.empty()) files = default_images();

    const bool gpu = kestrel::cuda_available();
    if (inject && !gpu) {
        std::printf("--inject-difference: no CUDA device, nothing to compare\n");
        return no_device_exit_code();
    }
    std::printf(gpu ? "CUDA device found: comparing the GPU with the CPU reference on %zu images\n"
                    : "no CUDA device: running the CPU reference only on %zu images (nothing to compare)\n",
                files.size());
    cudaStream_t stream = nullptr;
    if (gpu && cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
        throw std::runtime_error("cudaStreamCreate failed");

    kestrel::HostImage prev;
    std::vector<kestrel::Keypoint> prev_kps;
    for (const std::string& f : files) {
        const kestrel::HostImage img = load_grey(f);
        // Too small for the detector or the LK pyramid: say so naming the file (not the library's "parameter 'width'").
        check_image_size(img.width(), img.height(), dcfg, "image '" + f + "'");
        try {
            (void)kestrel::pyramid_sizes(img.width(), img.height(), lk.pyramid);
        } catch (const kestrel::InvalidArgument&) {
            throw std::runtime_error("image '" + f + "' is " + std::to_string(img.width()) + "x" +
                                     std::to_string(img.height()) + " pixels: too small for the LK pyramid (each of the " +
                                     std::to_string(lk.pyramid.levels) + " levels of --lk-levels at least 7x7)");
        }
        check.begin();
        const long long diffs_before = check.differences;
        std::printf("%s (%dx%d)\n", f.c_str(), img.width(), img.height());
        auto pyr = kestrel::build_pyramid_cpu(img.view(), dcfg.pyramid);
        auto maps = kestrel::fast_score_maps_cpu(pyr, dcfg.fast);
        auto kps = kestrel::detect_cpu(img.view(), dcfg);
        long long corners = 0;
        for (const auto& m : maps)
            for (float s : m.scores) corners += s > 0.0f;
        std::printf("  CPU reference: %zu levels, %lld corner pixels before NMS, %zu keypoints\n", pyr.size(), corners,
                    kps.size());

        kestrel::HostImage next_prev = img;  // LK tracks from the unperturbed image
        const auto next_kps = kps;
        if (inject) {  // self-test: one changed value per stage must be reported as a difference
            pyr[0].at(0, 0) ^= 1;
            maps[0].scores[maps[0].scores.size() / 2] += 1.0f;
            if (!kps.empty()) kps[0].score += 1.0f;
        }
        if (gpu) {
            // Pyramid and score maps, stage by stage.
            kestrel::DevicePyramid dp(img.width(), img.height(), dcfg.pyramid);
            kestrel::copy_async(img.view(), dp.level0(), stream);
            dp.build(stream);
            kestrel::DeviceScoreMaps dm(kestrel::pyramid_sizes(img.width(), img.height(), dcfg.pyramid), dcfg.fast);
            dm.compute(dp, stream);
            kestrel::synchronize(stream, "validate_against_cpu: pyramid + scores");
            for (int k = 0; k < dp.levels(); ++k) {
                const kestrel::HostImage lv = kestrel::download(dp.level(k));
                long long bad = 0;
                for (int y = 0; y < lv.height(); ++y)
                    bad += std::memcmp(lv.data() + static_cast<std::size_t>(y) * lv.width(), pyr[k].data() +
                                       static_cast<std::size_t>(y) * pyr[k].width(), lv.width()) != 0;
                check.compare(kPyramid, bad == 0, "pyramid level " + std::to_string(k) + ": " + std::to_string(bad) +
                                            " rows differ");
                const kestrel::ScoreMap sm = dm.download(k);
                long long bad_px = 0;
                std::string first;
                for (std::size_t i = 0; i < sm.scores.size(); ++i)
                    if (std::memcmp(&sm.scores[i], &maps[k].scores[i], sizeof(float)) != 0 && bad_px++ == 0)
                        first = " (first at x " + std::to_string(i % sm.width) + ", y " + std::to_string(i / sm.width) +
                                ": GPU " + std::to_string(sm.scores[i]) + ", CPU " + std::to_string(maps[k].scores[i]) + ")";
                check.compare(kScores, bad_px == 0, "score map level " + std::to_string(k) + ": " + std::to_string(bad_px) +
                                               " pixels differ" + first);
            }
            // The whole detector, synchronous and stream-ordered (pinned input; second call may be a graph).
            kestrel::FeatureDetector det(dcfg, kestrel::Backend::Cuda);
            const auto got = det.detect(img.view());
            compare_keypoints(check, "detect()", kps, got.data(), static_cast<int>(got.size()));
            kestrel::PinnedImage pin(img.width(), img.height());
            std::memcpy(pin.data(), img.data(), static_cast<std::size_t>(img.width()) * img.height());
            for (int rep = 0; rep < 2; ++rep) {
                det.detect_async(pin.view(), stream);
                kestrel::synchronize(stream, "validate_against_cpu: detect_async");
                compare_keypoints(check, rep == 0 ? "detect_async() call 1" : "detect_async() call 2",
                                  kps, det.host_keypoints(), det.host_count());
            }
        }
        if (!prev.empty() && prev.width() == img.width() && prev.height() == img.height())
            validate_lk(check, prev, img, prev_kps, lk, max_points, tol, gpu, inject, stream);
        if (gpu)
            std::printf("  %s\n", check.differences == diffs_before ? "GPU == CPU reference"
                                                                    : "DIFFERENT (see above)");
        prev = std::move(next_prev);
        prev_kps = next_kps;
    }
    if (stream) cudaStreamDestroy(stream);
    if (!gpu) {
        std::printf("no CUDA device: ran the CPU reference on %zu images; nothing was compared\n", files.size());
        if (no_device_exit_code() != kNoDeviceExitCode) {  // KESTREL_REQUIRE_GPU=1: a GPU run must not pass silently
            std::printf("FAILED: KESTREL_REQUIRE_GPU=1 but no CUDA device is usable\n");
            return 1;
        }
        return 0;
    }
    std::printf("differences by stage:");
    for (int s = 0; s < kStages; ++s) std::printf(" %s %lld", kStageNames[s], check.by_stage[s]);
    std::printf("\n");
    if (check.differences == 0) {
        std::printf("validated: %lld comparisons, no difference\n", check.checks);
        return 0;
    }
    std::printf("FAILED: %lld of %lld comparisons differ\n", check.differences, check.checks);
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "validate_against_cpu: %s\n%s", e.what(), kUsage);
        return 2;
    } catch (const kestrel::InvalidArgument& e) {
        std::fprintf(stderr, "validate_against_cpu: invalid option: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "validate_against_cpu: %s\n", e.what());
        return 1;
    }
}
