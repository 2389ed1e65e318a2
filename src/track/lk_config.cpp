// LkConfig validation and its resolution into the setup the CPU reference and the kernel share.
#include <cmath>
#include <string>

#include "lk_internal.hpp"

namespace kestrel {

const char* to_string(LkMode m) {
    switch (m) {
        case LkMode::Translation: return "Translation";
        case LkMode::TranslationOffset: return "TranslationOffset";
        case LkMode::TranslationGain: return "TranslationGain";
        case LkMode::TranslationGainOffset: return "TranslationGainOffset";
    }
    return "unknown";
}

const char* to_string(TemplateSource s) {
    switch (s) {
        case TemplateSource::PreviousFrame: return "PreviousFrame";
        case TemplateSource::FirstFrame: return "FirstFrame";
    }
    return "unknown";
}

const char* to_string(TrackStatus s) {
    switch (s) {
        case TrackStatus::Tracked: return "Tracked";
        case TrackStatus::LostOutOfBounds: return "LostOutOfBounds";
        case TrackStatus::LostResidual: return "LostResidual";
        case TrackStatus::LostSingular: return "LostSingular";
        case TrackStatus::NotConverged: return "NotConverged";
        case TrackStatus::LostForwardBackward: return "LostForwardBackward";
        case TrackStatus::LostAnchor: return "LostAnchor";
        case TrackStatus::Outlier: return "Outlier";
    }
    return "unknown";
}

namespace {

void check_open_closed(const char* where, const char* param, float v, float lo, float hi) {
    detail::check(std::isfinite(v) && v > lo && v <= hi, where, param,
                  "= " + detail::to_text(v) + " must be in (" + detail::to_text(lo) + ", " + detail::to_text(hi) + "]");
}

}  // namespace

void validate(const LkConfig& cfg, const char* where) {
    detail::check_range(where, "pyramid.levels", cfg.pyramid.levels, 1, kMaxLevels);
    check_open_closed(where, "pyramid.scale", cfg.pyramid.scale, 1.0f, 2.0f);
    detail::check_range(where, "mode", static_cast<int>(cfg.mode), 0, 3);
    detail::check_range(where, "template_source", static_cast<int>(cfg.template_source), 0, 1);
    detail::check_range(where, "patch_size", cfg.patch_size, kMinPatchSize, kMaxPatchSize);
    detail::check_range(where, "coarse_patch_size", cfg.coarse_patch_size, kMinPatchSize, kMaxPatchSize);
    detail::check_range(where, "coarse_from_level", cfg.coarse_from_level, 1, kMaxLevels);
    detail::check_range(where, "max_iterations", cfg.max_iterations, 1, 100);
    check_open_closed(where, "min_update", cfg.min_update, 0.0f, 1.0f);
    check_open_closed(where, "max_residual", cfg.max_residual, 0.0f, 255.0f);
    detail::check_range(where, "min_eigenvalue", cfg.min_eigenvalue, 0.0f, 1e6f);
    detail::check_range(where, "coarse_max_iterations", cfg.coarse_max_iterations, 1, 100);
}

int lk_patch_size(const LkConfig& cfg, int level) {
    validate(cfg, "lk_patch_size");
    detail::check_range("lk_patch_size", "level", level, 0, cfg.pyramid.levels - 1);
    return level < cfg.coarse_from_level ? cfg.patch_size : cfg.coarse_patch_size;
}

namespace detail {

LkSetup make_lk_setup(const LkConfig& cfg) {
    validate(cfg, "LkConfig");
    LkSetup s{};
    s.levels = cfg.pyramid.levels;
    for (int k = 0; k < s.levels; ++k) {
        s.scale[k] = level_scale(cfg.pyramid, k);
        s.patch[k] = k < cfg.coarse_from_level ? cfg.patch_size : cfg.coarse_patch_size;
    }
    s.est_gain = cfg.mode == LkMode::TranslationGain || cfg.mode == LkMode::TranslationGainOffset;
    s.est_offset = cfg.mode == LkMode::TranslationOffset || cfg.mode == LkMode::TranslationGainOffset;
    s.max_iterations = cfg.max_iterations;
    s.coarse_iterations = cfg.coarse_max_iterations < cfg.max_iterations ? cfg.coarse_max_iterations : cfg.max_iterations;
    s.min_update = cfg.min_update;
    s.min_update_sq = cfg.min_update * cfg.min_update;
    s.coarse_min_update = s.min_update;
    s.coarse_min_update_sq = s.min_update_sq;
    s.max_residual = cfg.max_residual;
    s.min_eigenvalue = cfg.min_eigenvalue;
    s.reach = 0.0f;
    for (int k = 0; k < s.levels; ++k) s.reach += static_cast<float>(s.patch[k]) * s.scale[k];
    for (int k = 0; k < s.levels; ++k) {
        s.inv_scale[k] = exact_reciprocal(s.scale[k]);
        s.inv_npx[k] = exact_reciprocal(static_cast<float>(s.patch[k] * s.patch[k]));
        s.window[k] = fdiv(s.reach, s.scale[k]);
    }
    s.stored_from_level = s.levels;
    return s;
}

void lk_levels(const std::vector<HostImage>& pyr, const LkConfig& cfg, const char* where, const char* param,
               LkImage* out) {
    const std::string p(param);
    check(static_cast<int>(pyr.size()) == cfg.pyramid.levels, where, param,
          "has " + to_text(pyr.size()) + " levels, LkConfig.pyramid.levels = " + to_text(cfg.pyramid.levels));
    check(!pyr.empty() && !pyr[0].empty(), where, param, "level 0 must not be empty");
    const auto sizes = pyramid_sizes(pyr[0].width(), pyr[0].height(), cfg.pyramid);
    for (std::size_t k = 0; k < pyr.size(); ++k) {
        check(pyr[k].width() == sizes[k].width && pyr[k].height() == sizes[k].height, where, param,
              "level " + to_text(k) + " is " + to_text(pyr[k].width()) + "x" + to_text(pyr[k].height()) +
                  ", expected " + to_text(sizes[k].width) + "x" + to_text(sizes[k].height) +
                  " (build it with build_pyramid_cpu and LkConfig.pyramid)");
        out[k] = {pyr[k].data(), pyr[k].width(), pyr[k].height(), pyr[k].pitch()};
    }
}

void check_point(const char* where, const char* param, std::size_t index, float x, float y) {
    if (!std::isfinite(x) || !std::isfinite(y))
        fail(where, param,
             "[" + to_text(index) + "] = (" + to_text(x) + ", " + to_text(y) + ") must be finite");
}

}  // namespace detail
}  // namespace kestrel
