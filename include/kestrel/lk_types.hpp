// Plain data of the Lucas-Kanade tracker: modes, template policy, statuses, the configuration, points,
// guesses and results, with the free functions on them. No class; the rules header detail/lk_rules.hpp
// and the kernels include this header, never lk_tracker.hpp.
#pragma once
#include <cstdint>

#include "kestrel/keypoint.hpp"  // Point2f
#include "kestrel/pyramid_types.hpp"

namespace kestrel {

/// Which parameters are estimated besides the translation t = (tx, ty). Model: I(x + t) = gain * T(x) + offset.
enum class LkMode {
    Translation = 0,            ///< gain and offset held at their initial values (default 1, 0)
    TranslationOffset = 1,      ///< offset estimated, gain held at its initial value
    TranslationGain = 2,        ///< gain estimated (on level 0), offset held at its initial value
    TranslationGainOffset = 3,  ///< both estimated (the gain on level 0 only; see lk_rules.hpp)
};

/// Where a feature's template (patch and its gradients) comes from.
enum class TemplateSource {
    PreviousFrame = 0,  ///< KLT style: re-extracted from the previous frame's pyramid every frame
    FirstFrame = 1,     ///< extracted once, in the frame where the feature was first seen, and kept
};

/// Outcome of tracking one feature.
enum class TrackStatus : std::int32_t {
    Tracked = 0,              ///< converged on level 0 with an acceptable residual
    LostOutOfBounds = 1,      ///< the level-0 patch (or its template) left the image, or the estimate left
                              ///< the search window: sum_k patch_k * s_k px (the pyramid's reach) around
                              ///< the initial guess
    LostResidual = 2,         ///< mean |residual| on level 0 above LkConfig::max_residual, or the fitted
                              ///< gain left [0.1, 10] (the patch no longer correlates with the template)
    LostSingular = 3,         ///< Hessian singular / too weak (LkConfig::min_eigenvalue), or estimate not finite
    NotConverged = 4,         ///< level 0 used max_iterations without an update below min_update
    LostForwardBackward = 5,  ///< FeatureTracker only: the backward track missed by more than fb_max_error
    LostAnchor = 6,           ///< FeatureTracker only: the affine fit against the track's first observation
                              ///< failed (TrackerConfig::anchor: residual, distance, degenerate warp)
    Outlier = 7,              ///< FeatureTracker only, with TrackerConfig::geometric_check: the track's motion
                              ///< disagrees with the frame's relative pose (Sampson error above the threshold)
};

const char* to_string(LkMode m);
const char* to_string(TemplateSource s);
const char* to_string(TrackStatus s);

constexpr int kMinPatchSize = 4;   ///< smallest patch side
constexpr int kMaxPatchSize = 16;  ///< largest patch side (a warp lane holds at most 8 pixels)

struct LkConfig {
    PyramidConfig pyramid{3, 2.0f};  ///< tracking pyramid (level 0 = frame); levels >= 1
    LkMode mode = LkMode::TranslationGainOffset;
    TemplateSource template_source = TemplateSource::PreviousFrame;
    int patch_size = 16;          ///< side of the square patch on levels < coarse_from_level, [4, 16]
    int coarse_patch_size = 8;    ///< side on levels >= coarse_from_level, [4, 16]
    int coarse_from_level = 3;    ///< first level using coarse_patch_size, [1, kMaxLevels]. The default
                                  ///< keeps 16x16 on all 3 default levels: on real video an 8x8 level-2
                                  ///< patch is dragged by motion next to the feature (docs/tracker.md)
    int max_iterations = 10;      ///< Gauss-Newton iterations per level, [1, 100]. 10: the tracking accuracy of
                                  ///< 30 (docs/tracker.md, section 2), and the GPU launch, as long as its
                                  ///< slowest track, ends sooner
    float min_update = 0.01f;     ///< stop when |dt| (level pixels) < min_update, (0, 1]
    float max_residual = 30.0f;   ///< LostResidual when mean |residual| (grey levels) exceeds it, (0, 255]
    float min_eigenvalue = 0.1f;  ///< LostSingular when the smaller eigenvalue of sum(grad grad^T) / pixels
                                  ///< (grey^2 / px^2) is below it, [0, 1e6]. 0.1 is OpenCV's default
                                  ///< minEigThreshold 1e-4 (Scharr-scaled gradients) in these units
    int coarse_max_iterations = 4;  ///< at most this many of the max_iterations on every level but 0, [1, 100]:
                                    ///< a coarse level only seeds the next, and the rare track that runs to
                                    ///< the cap there sets the GPU launch's length (docs/tracker.md, section 2).
                                    ///< Searches from a distant seed (stereo matching from zero) want more
};

/// Throws InvalidArgument naming the field and its bound.
void validate(const LkConfig& cfg, const char* where = "LkConfig");
/// Patch side used on `level` (validated config).
int lk_patch_size(const LkConfig& cfg, int level);

/// Initial estimate of one feature in the current frame (level-0 pixels), e.g. an IMU prediction.
struct LkGuess {
    float x = 0.0f;
    float y = 0.0f;
    float gain = 1.0f;
    float offset = 0.0f;
};

/// Tracking result of one feature. x, y in level-0 pixels of the current frame; I_cur(x + .) ~= gain * T + offset.
struct LkResult {
    float x = 0.0f;
    float y = 0.0f;
    float gain = 1.0f;
    float offset = 0.0f;
    float residual = 0.0f;   ///< mean |gain * T + offset - I| over the level-0 patch at the final estimate
    std::int32_t iterations = 0;  ///< level-0 iterations used
    TrackStatus status = TrackStatus::Tracked;
};

}  // namespace kestrel
