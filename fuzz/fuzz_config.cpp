// libFuzzer target: configuration validation. Arbitrary PyramidConfig, FastConfig, DetectorConfig,
// LkConfig, TrackerConfig and image sizes go through validate() and the functions derived from a
// configuration (pyramid_sizes, level_scale, grid_size, corner_lut, lk_patch_size). Each either throws
// InvalidArgument naming its parameter or returns values that obey the documented bounds; any other
// exception, crash or sanitizer report is a bug.
#include <cstdint>

#include "fuzz_input.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/feature_tracker.hpp"
#include "kestrel/lk_tracker.hpp"

using namespace kestrel;

namespace {

template <typename F>
bool accepted(F&& f) {
    try {
        f();
        return true;
    } catch (const InvalidArgument& e) {
        fuzz::check_message(e);
        return false;
    }
}

PyramidConfig draw_pyramid(fuzz::Input& in) { return {in.param(1, kMaxLevels), in.fparam(1.0f, 2.0f)}; }

FastConfig draw_fast(fuzz::Input& in) {
    FastConfig c;
    c.threshold = in.param(0, 254);
    c.arc_min = in.param(1, 16);
    c.arc_max = in.param(1, 16);
    c.score = static_cast<ScoreType>(in.param(0, 3));
    return c;
}

DetectorConfig draw_detector(fuzz::Input& in) {
    DetectorConfig c;
    c.pyramid = draw_pyramid(in);
    c.fast = draw_fast(in);
    c.nms_radius = in.param(1, 4);
    if (in.flag()) {
        const int m = in.param(1, 32);  // multiples of 32 (valid when m in [1, 32]); no overflow
        c.cell_width = (m > -65536 && m < 65536) ? 32 * m : m;
    } else {
        c.cell_width = in.param(32, 1024);
    }
    c.cell_height = in.param(8, 1024);
    c.per_cell = in.param(1, 8);
    c.max_features = in.flag() ? in.param(0, 64) : in.param(0, 1 << 24);
    c.border = in.param(0, 64);
    c.cuda_graph = in.flag();
    return c;
}

LkConfig draw_lk(fuzz::Input& in) {
    LkConfig c;
    c.pyramid = draw_pyramid(in);
    c.mode = static_cast<LkMode>(in.param(0, 3));
    c.template_source = static_cast<TemplateSource>(in.param(0, 1));
    c.patch_size = in.param(kMinPatchSize, kMaxPatchSize);
    c.coarse_patch_size = in.param(kMinPatchSize, kMaxPatchSize);
    c.coarse_from_level = in.param(1, kMaxLevels);
    c.max_iterations = in.param(1, 100);
    c.min_update = in.fparam(0.0f, 1.0f);
    c.max_residual = in.fparam(0.0f, 255.0f);
    c.min_eigenvalue = in.fparam(0.0f, 1e6f);
    return c;
}

void fuzz_pyramid(fuzz::Input& in) {
    const PyramidConfig c = draw_pyramid(in);
    const int w = in.param(kMinLevelSide, kMaxImageSide), h = in.param(kMinLevelSide, kMaxImageSide);
    const bool ok = accepted([&] { validate(c); });
    FUZZ_CHECK(ok == (c.levels >= 1 && c.levels <= kMaxLevels && std::isfinite(c.scale) && c.scale > 1.0f &&
                      c.scale <= 2.0f));
    std::vector<Size2> sizes;
    if (!accepted([&] { sizes = pyramid_sizes(w, h, c); })) return;
    FUZZ_CHECK(ok);
    FUZZ_CHECK(static_cast<int>(sizes.size()) == c.levels);
    FUZZ_CHECK(sizes[0].width == w && sizes[0].height == h);
    for (std::size_t k = 1; k < sizes.size(); ++k) {
        FUZZ_CHECK(sizes[k].width >= kMinLevelSide && sizes[k].height >= kMinLevelSide);
        FUZZ_CHECK(sizes[k].width <= sizes[k - 1].width && sizes[k].height <= sizes[k - 1].height);
    }
    float prev = 0.0f;
    for (int k = 0; k < c.levels; ++k) {
        const float s = level_scale(c, k);
        FUZZ_CHECK(std::isfinite(s) && s >= 1.0f && s > prev);
        prev = s;
    }
    FUZZ_CHECK(!accepted([&] { level_scale(c, c.levels); }));
    FUZZ_CHECK(!accepted([&] { level_scale(c, -1); }));
}

void fuzz_fast(fuzz::Input& in) {
    const FastConfig c = draw_fast(in);
    const bool ok = accepted([&] { validate(c); });
    const int s = static_cast<int>(c.score);
    FUZZ_CHECK(ok == (c.threshold >= 0 && c.threshold <= 254 && c.arc_min >= 1 && c.arc_min <= 16 &&
                      c.arc_max >= c.arc_min && c.arc_max <= 16 && s >= 0 && s <= 3));
    std::vector<std::uint32_t> lut;
    const bool lut_ok = accepted([&] { lut = corner_lut(c.arc_min, c.arc_max); });
    FUZZ_CHECK(lut_ok == (c.arc_min >= 1 && c.arc_max >= c.arc_min && c.arc_max <= 16));
    if (lut_ok) {
        FUZZ_CHECK(lut.size() == 2048u);
        // 0xFFFF (all 16 set) is a corner exactly when arc_max == 16; 0 never is.
        FUZZ_CHECK(((lut[0xFFFF >> 5] >> 31) & 1u) == (c.arc_max == 16 ? 1u : 0u));
        FUZZ_CHECK((lut[0] & 1u) == 0u);
    }
}

void fuzz_detector(fuzz::Input& in) {
    const DetectorConfig c = draw_detector(in);
    const int w = in.param(1, kMaxImageSide), h = in.param(1, kMaxImageSide);
    const bool ok = accepted([&] { validate(c); });
    if (ok) {
        FUZZ_CHECK(accepted([&] { validate(c.pyramid); }));
        FUZZ_CHECK(accepted([&] { validate(c.fast); }));
        FUZZ_CHECK(c.cell_width % 32 == 0 && c.cell_width >= 32 && c.cell_width <= 1024);
        FUZZ_CHECK(c.cell_height >= 8 && c.cell_height <= 1024);
        FUZZ_CHECK(c.nms_radius >= 1 && c.nms_radius <= 4 && c.per_cell >= 1 && c.per_cell <= 8);
        FUZZ_CHECK(c.border >= 0 && c.border <= 64 && c.max_features >= 0);
    }
    Size2 g;
    if (accepted([&] { g = grid_size(w, h, c); })) {
        FUZZ_CHECK(ok);
        FUZZ_CHECK(g.width >= 1 && g.height >= 1);
        FUZZ_CHECK(static_cast<long long>(g.width) * c.cell_width >= w);
        FUZZ_CHECK(static_cast<long long>(g.width - 1) * c.cell_width < w);
        FUZZ_CHECK(static_cast<long long>(g.height) * c.cell_height >= h);
        FUZZ_CHECK(static_cast<long long>(g.height - 1) * c.cell_height < h);
    }
}

void fuzz_lk(fuzz::Input& in) {
    const LkConfig c = draw_lk(in);
    const int level = in.param(0, kMaxLevels - 1);
    const bool ok = accepted([&] { validate(c); });
    int n = 0;
    if (accepted([&] { n = lk_patch_size(c, level); })) {
        FUZZ_CHECK(ok);
        FUZZ_CHECK(n >= kMinPatchSize && n <= kMaxPatchSize);
        FUZZ_CHECK(n == (level < c.coarse_from_level ? c.patch_size : c.coarse_patch_size));
    }
    if (ok) {
        FUZZ_CHECK(std::isfinite(c.min_update) && c.min_update > 0.0f && c.min_update <= 1.0f);
        FUZZ_CHECK(std::isfinite(c.max_residual) && c.max_residual > 0.0f && c.max_residual <= 255.0f);
        FUZZ_CHECK(std::isfinite(c.min_eigenvalue) && c.min_eigenvalue >= 0.0f && c.min_eigenvalue <= 1e6f);
    }
}

void fuzz_tracker(fuzz::Input& in) {
#if defined(KESTREL_FUZZ_NO_TRACKER_CONFIG)
    (void)in;  // validate(TrackerConfig) not in a CPU source yet (see fuzz/CMakeLists.txt)
#else
    TrackerConfig c;
    c.lk = draw_lk(in);
    c.detector = draw_detector(in);
    c.target_features = in.param(1, 65536);
    c.redetect_fraction = in.fparam(0.0f, 1.0f);
    c.forward_backward = in.flag();
    c.fb_max_error = in.fparam(0.0f, 100.0f);
    if (accepted([&] { validate(c); })) {
        FUZZ_CHECK(accepted([&] { validate(c.lk); }));
        FUZZ_CHECK(accepted([&] { validate(c.detector); }));
        FUZZ_CHECK(c.target_features >= 1 && c.target_features <= 65536);
        FUZZ_CHECK(std::isfinite(c.redetect_fraction) && c.redetect_fraction >= 0.0f && c.redetect_fraction <= 1.0f);
        FUZZ_CHECK(std::isfinite(c.fb_max_error) && c.fb_max_error > 0.0f && c.fb_max_error <= 100.0f);
    }
#endif
}

void fuzz_view(fuzz::Input& in) {
    static const std::uint8_t pixel = 0;
    HostView v{in.flag() ? &pixel : nullptr, in.param(1, kMaxImageSide), in.param(1, kMaxImageSide), 0};
    v.pitch = static_cast<std::size_t>(static_cast<std::int64_t>(v.width) + in.param(-4, 4));
    const bool ok = accepted([&] { validate_view("fuzz", "image", v); });
    FUZZ_CHECK(ok == (v.data != nullptr && v.width >= 1 && v.width <= kMaxImageSide && v.height >= 1 &&
                      v.height <= kMaxImageSide && v.pitch >= static_cast<std::size_t>(v.width)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::Input in(data, size);
    switch (in.byte() % 6) {
        case 0: fuzz_pyramid(in); break;
        case 1: fuzz_fast(in); break;
        case 2: fuzz_detector(in); break;
        case 3: fuzz_lk(in); break;
        case 4: fuzz_tracker(in); break;
        default: fuzz_view(in); break;
    }
    return 0;
}
