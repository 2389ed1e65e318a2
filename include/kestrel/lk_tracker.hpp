// Pyramidal inverse-compositional Lucas-Kanade with affine illumination (gain, offset): the
// configuration, the CPU reference and the GPU tracker (one warp per feature, all levels in one launch).
// Equations, conventions and tolerance: docs/tracker.md and kernels/track/lk_track.cu; the shared per-pixel
// and per-iteration rules: include/kestrel/detail/lk_rules.hpp.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kestrel/image.hpp"
#include "kestrel/lk_types.hpp"
#include "kestrel/pyramid.hpp"
#include "kestrel/stream.hpp"

namespace kestrel {

/// CPU reference (the definition the GPU matches): templates from `ref` (a build_pyramid_cpu result
/// with cfg.pyramid) at `ref_points`, tracked into `cur` (same geometry) starting from `guesses`
/// (one per point; nullptr = start at the reference position, gain 1, offset 0). Points and guesses
/// must be finite (InvalidArgument otherwise); points outside the image come back LostOutOfBounds.
std::vector<LkResult> lk_track_cpu(const std::vector<HostImage>& ref, const std::vector<HostImage>& cur,
                                   const std::vector<Point2f>& ref_points, const LkConfig& cfg,
                                   const std::vector<LkGuess>* guesses = nullptr);

/// GPU tracker for up to `capacity` features. Allocates once (stored templates for
/// TemplateSource::FirstFrame); every call below is stream-ordered, allocation-free and does not
/// synchronize. Pointer arguments are device memory or pinned host memory (cudaMallocHost, read
/// through unified addressing); they must stay valid until the stream reaches the work. Results
/// equal lk_track_cpu within the stated tolerance (positions 1e-3 px, gain/offset 1e-4).
/// Pyramids must have cfg.pyramid's levels and scale.
class DeviceLkTracker {
public:
    DeviceLkTracker();
    DeviceLkTracker(const LkConfig& cfg, int capacity);  ///< capacity in [1, 65536]
    DeviceLkTracker(DeviceLkTracker&&) noexcept;
    DeviceLkTracker& operator=(DeviceLkTracker&&) noexcept;
    ~DeviceLkTracker();

    const LkConfig& config() const;
    int capacity() const;

    /// Previous-frame templates: feature i's template from `ref` at ref_points[i], tracked into `cur`
    /// from guesses[i] (nullptr = from ref_points[i]); writes results[i]. count in [0, capacity].
    /// Works for either template_source (it never touches the stored templates).
    void track_async(const DevicePyramid& ref, const DevicePyramid& cur, const Point2f* ref_points,
                     const LkGuess* guesses, LkResult* results, int count, StreamHandle stream);

    /// First-frame templates: stores the template of points[i] (in `ref`) into slot slots[i].
    void store_templates_async(const DevicePyramid& ref, const Point2f* points, const std::int32_t* slots,
                               int count, StreamHandle stream);
    /// Tracks the features whose templates are stored in slots[i] into `cur` from guesses[i] (required).
    void track_stored_async(const DevicePyramid& cur, const std::int32_t* slots, const LkGuess* guesses,
                            LkResult* results, int count, StreamHandle stream);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    Impl& impl(const char* where) const;
};

}  // namespace kestrel
