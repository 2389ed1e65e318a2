// FeatureTracker: track bookkeeping shared by both backends (ids, ages, previous positions, lost
// tracks, forward-backward check, the re-detection policy and template slots). Policy, per frame:
//   1. track every live track (LK from its previous position, or from the caller's prediction);
//   2. drop those whose status is not Tracked or NotConverged (a track whose level 0 ran out of
//      iterations but whose residual passed is kept, as OpenCV's LK keeps it), and with
//      forward_backward those whose backward track is lost or ends more than fb_max_error px from the
//      previous position (LostForwardBackward); with anchoring, a track whose fit ran (anchor.interval: the fit
//      schedule, detail::anchor_due before the frame, detail::anchor_fit_wanted after LK) takes the fitted position,
//      one whose fit did not run the frame-to-frame estimate, and a failed fit re-anchors the track at the
//      frame-to-frame estimate, except where that estimate did not converge or the level-0 template reaches
//      past the frame's edge (previous or new position): LostAnchor;
//   2b. with geometric_check, test the tracks kept by 2 against one relative pose between the two frames, and
//      those live baseline_frames frames against one between their position then and now, and end those that
//      disagree as Outlier (src/track/geometric_check.cpp);
//   3. when no track is live, or fewer than redetect_fraction * target_features, run the detector on
//      this frame with every grid cell holding a live track masked, and add the best new keypoints by
//      score (whose level-0 template fits in the image) until target_features tracks are live
//      (include/kestrel/detail/redetect_rules.hpp). Where the frame is certain to re-detect (and, with
//      KESTREL_REDETECT_PLAN=likely, where it may), the CUDA backend plans the re-detection on the device by the same
//      rules and runs the detection in the frame's stream (no second round trip); the host uses it when its own
//      decision and mask agree (the geometric check may end more tracks), and otherwise detects as without the plan.
#include "kestrel/feature_tracker.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "anchor_internal.hpp"
#include "feature_tracker_backend.hpp"
#include "geometric_check.hpp"
#include "kestrel/camera.hpp"
#include "kestrel/detail/redetect_rules.hpp"
#include "kestrel/device_image.hpp"
#include "lk_internal.hpp"
#include "src/core/backend.hpp"

namespace kestrel {

void validate(const TrackerConfig& cfg, const char* where) {
    const std::string w(where);
    validate(cfg.lk, (w + ".lk").c_str());
    validate(cfg.detector, (w + ".detector").c_str());
    detail::check_range(where, "target_features", cfg.target_features, 1, 65536);
    detail::check_range(where, "redetect_fraction", cfg.redetect_fraction, 0.0f, 1.0f);
    detail::check(std::isfinite(cfg.fb_max_error) && cfg.fb_max_error > 0.0f && cfg.fb_max_error <= 100.0f, where,
                  "fb_max_error", "= " + detail::to_text(cfg.fb_max_error) + " must be in (0, 100]");
    detail::check_range(where, "anchor.max_iterations", cfg.anchor.max_iterations, 1, 100);
    detail::check_range(where, "anchor.interval", cfg.anchor.interval, 1, 64);
    detail::check_range(where, "threads", cfg.threads, 0, 256);
    detail::check(std::isfinite(cfg.motion.level_reach) && cfg.motion.level_reach > 0.0f &&
                      cfg.motion.level_reach <= 1000.0f,
                  where, "motion.level_reach", "= " + detail::to_text(cfg.motion.level_reach) + " must be in (0, 1000]");
    detail::check(std::isfinite(cfg.anchor.max_residual) && cfg.anchor.max_residual > 0.0f &&
                      cfg.anchor.max_residual <= 255.0f,
                  where, "anchor.max_residual", "= " + detail::to_text(cfg.anchor.max_residual) + " must be in (0, 255]");
    detail::check(std::isfinite(cfg.anchor.max_distance) && cfg.anchor.max_distance > 0.0f &&
                      cfg.anchor.max_distance <= 100.0f,
                  where, "anchor.max_distance", "= " + detail::to_text(cfg.anchor.max_distance) + " must be in (0, 100]");
    const GeometricCheckConfig& g = cfg.geometric_check;
    if (g.enabled) {
        validate(g.camera, (w + ".geometric_check.camera").c_str());
        detail::check(std::isfinite(g.threshold_px) && g.threshold_px > 0.0 && g.threshold_px <= 100.0, where,
                      "geometric_check.threshold_px",
                      "= " + detail::to_text(g.threshold_px) + " must be in (0, 100]");
        detail::check(std::isfinite(g.confidence) && g.confidence >= 0.5 && g.confidence < 1.0, where,
                      "geometric_check.confidence", "= " + detail::to_text(g.confidence) + " must be in [0.5, 1)");
        detail::check_range(where, "geometric_check.max_hypotheses", g.max_hypotheses, 1, 1 << 20);
        detail::check_range(where, "geometric_check.min_tracks", g.min_tracks, 8, 65536);
        detail::check_range(where, "geometric_check.baseline_frames", g.baseline_frames, 1, detail::kGeoMaxBaseline);
    }
}

struct FeatureTracker::Impl {
    int width = 0, height = 0;
    TrackerConfig cfg;
    Backend backend = Backend::Cuda;
    std::unique_ptr<detail::TrackerBackend> be;
    std::vector<Track> tracks, lost, next;
    std::vector<std::int32_t> slots, next_slots, free_slots;  // template slots, aligned with tracks
    std::vector<detail::AnchorState> anchors, next_anchors;    // anchor states, aligned with tracks
    Size2 grid{};
    std::vector<std::uint8_t> cell_mask;
    std::vector<Keypoint> candidates;
    detail::LkImage frame_box{};  // level-0 geometry only, for the template-fits test
    int template_side = 0;  // level 0's patch side
    detail::LkSetup lk_setup{};  // the tracking setup (the levels' scales, for the levels a predicted start skips)
    detail::AnchorSetup anchor_setup{};  // the anchor setup (the fit schedule, detail::anchor_due)
    std::uint64_t next_id = 1;
    std::int64_t frames = 0;
    bool redetected = false;
    bool in_flight = false;
    // Tracks lost in each of the last frames (a ring): how close to re-detecting a frame may end (redetect_hint).
    std::array<int, 8> recent_losses{};
    int loss_at = 0;
    int in_flight_count = 0;
    int restored = 0;  // re-anchored tracks this frame: the first entries of the backend's new_points/new_slots
    // Geometric check (cfg.geometric_check.enabled): the check, per-track scratch, the frame's rotation prior.
    std::unique_ptr<detail::GeometricCheck> geo;
    std::vector<detail::TrackVerdict> verdicts;
    std::vector<std::uint8_t> geo_outlier;
    std::array<double, 9> prior{};
    bool has_prior = false;
    // The baseline test (geometric_check.baseline_frames = L > 1): each live track's last positions (aligned with
    // tracks), the base positions of the frame, and the rotation priors of the last frames in a row (newest last).
    std::vector<detail::GeoHistory> history, next_history;
    std::vector<Point2f> base;
    detail::GeoPriorRun prior_run{};
    bool track_history = false;  // geometric_check.enabled with baseline_frames > 1
    bool geo_device = false;     // this frame's check was enqueued on the device (geo_enqueue)
    GeometricCheckResult no_check{};

    void check_frame(const char* where, int w, int h) const {
        detail::check(w == width && h == height, where, "frame", [&] {
            return "is " + detail::to_text(w) + "x" + detail::to_text(h) + ", the tracker was made for " +
                   detail::to_text(width) + "x" + detail::to_text(height);
        });
    }

    // Stages the inputs of every live track; returns their count.
    int stage(const char* where, const std::vector<Point2f>* predictions, const std::array<double, 9>* rotation_prior) {
        if (in_flight)
            throw StateError(std::string("kestrel: FeatureTracker::") + where +
                             ": the previous frame is still in flight; call finish() first");
        if (rotation_prior) {
            detail::check(geo != nullptr, where, "rotation_prior",
                          "needs TrackerConfig::geometric_check.enabled (the prior is the check's rotation)");
            detail::check_rotation(where, "rotation_prior", rotation_prior->data());
            prior = *rotation_prior;
        }
        has_prior = rotation_prior != nullptr;
        const int n = static_cast<int>(tracks.size());
        if (predictions) {
            detail::check(predictions->size() == tracks.size(), where, "predictions", [&] {
                return "has " + detail::to_text(predictions->size()) + " entries, must have one per live track (" +
                       detail::to_text(tracks.size()) + ")";
            });
            for (std::size_t i = 0; i < predictions->size(); ++i)
                detail::check_point(where, "predictions", i, (*predictions)[i].x, (*predictions)[i].y);
        }
        const bool first_frame_templates = cfg.lk.template_source == TemplateSource::FirstFrame;
        if (cfg.anchor.enabled) {
            // The fit schedule: which tracks' fits are due in this frame (detail::anchor_due).
            detail::AnchorState* as = be->anchor_states();
            for (int i = 0; i < n; ++i) {
                const std::size_t k = static_cast<std::size_t>(i);
                as[i] = anchors[k];
                as[i].due = detail::anchor_due(anchor_setup, frames, tracks[k].id, anchors[k]);
            }
        }
        Point2f* o = be->origins();
        LkGuess* g = be->guesses();
        std::int32_t* s = be->slots();
        std::uint8_t* skip = be->coarse_skips();
        const MotionConfig& mo = cfg.motion;
        for (int i = 0; i < n; ++i) {
            const Track& t = tracks[static_cast<std::size_t>(i)];
            o[i] = {t.x, t.y};
            // The start: the caller's prediction; else the constant-velocity one (a track with a last displacement:
            // born before the last frame); else the position. A predicted start searches from the coarsest level
            // whose reach covers its predicted displacement.
            const bool velocity = mo.constant_velocity && t.age >= 1;
            const Point2f p = predictions ? (*predictions)[static_cast<std::size_t>(i)]
                              : velocity  ? Point2f{detail::constant_velocity_start(t.x, t.prev_x),
                                                   detail::constant_velocity_start(t.y, t.prev_y)}
                                          : Point2f{t.x, t.y};
            g[i] = first_frame_templates ? LkGuess{p.x, p.y, t.gain, t.offset} : LkGuess{p.x, p.y, 1.0f, 0.0f};
            const bool predicted = predictions != nullptr || velocity;
            skip[i] = static_cast<std::uint8_t>(
                predicted && mo.fewer_levels
                    ? detail::predicted_levels_skipped(lk_setup, detail::fsub(p.x, t.x), detail::fsub(p.y, t.y),
                                                       mo.level_reach)
                    : 0);
            s[i] = slots[static_cast<std::size_t>(i)];
        }
        return n;
    }

    detail::TrackVerdictRule verdict_rule() const { return detail::verdict_rule(cfg); }

    /// The base of the baseline test: each track's position L frames back (NaN for a younger track), and the prior
    /// over those L frames when each of them had one (R_k R_(k-1) ... R_(k-L+1)); false without it.
    bool geo_bases(std::size_t count, std::array<double, 9>& R_base) {
        const int L = cfg.geometric_check.baseline_frames;
        if (L <= 1) return false;
        for (std::size_t i = 0; i < count; ++i) base[i] = detail::geo_history_base(history[i], L);
        return has_prior && detail::geo_prior_over(prior_run, prior, L, &R_base);
    }

    /// The CUDA backend with a rotation prior: the check enqueued on the frame's stream right after the tracking
    /// launch, read after the frame's one wait (update_tracks); otherwise update_tracks runs it on the host.
    void geo_enqueue(int n, StreamHandle stream) {
        geo_device = false;
        if (!geo || !has_prior || n <= 0) return;
        std::array<double, 9> R_base{};
        const bool has_base_prior = geo_bases(static_cast<std::size_t>(n), R_base);
        const bool baseline = cfg.geometric_check.baseline_frames > 1;
        detail::GeoTrackInputs in;
        in.results = be->results();
        in.back = be->back_results();
        in.anchors = be->anchor_results();
        in.origins = be->origins();
        in.rule = verdict_rule();
        in.tracks = n;
        geo_device = geo->run_device_async(in, prior.data(), baseline ? base.data() : nullptr,
                                           has_base_prior ? R_base.data() : nullptr, stream);
    }

    /// True when the level-0 template at (x, y) (the patch and its one-tap gradient margin) lies inside the frame:
    /// none of its taps is a clamped edge pixel (detail::inside's test without the border's kLkBorder taps).
    bool template_in_frame(float x, float y) const {
        return detail::template_in_frame(x, y, template_side, width, height);
    }

    /// How likely the frame about to start with n live tracks is to re-detect: Certain when n tracks already
    /// re-detect (a frame only loses tracks before its re-detection), Likely when n less twice the most tracks a
    /// recent frame lost (and 2) would; the backend may then run the detection without a second round trip.
    detail::TrackerBackend::RedetectHint redetect_hint(int n) const {
        using Hint = detail::TrackerBackend::RedetectHint;
        const float f = cfg.redetect_fraction;
        const int target = cfg.target_features;
        if (detail::redetect_wanted(n, f, target)) return Hint::Certain;
        const int margin = 2 * *std::max_element(recent_losses.begin(), recent_losses.end()) + 2;
        return detail::redetect_wanted(std::max(n - margin, 0), f, target) ? Hint::Likely : Hint::None;
    }

    void update_tracks() {
        const LkResult* r = be->results();
        const LkResult* b = be->back_results();
        const detail::AnchorResult* an = be->anchor_results();
        lost.clear();
        next.clear();
        next_slots.clear();
        next_anchors.clear();
        next_history.clear();
        restored = 0;
        const std::size_t count = static_cast<std::size_t>(in_flight_count);
        // NotConverged keeps the track (its residual passed; the estimate is the last iterate), as OpenCV's LK
        // does; the live track's status is Tracked. The rule: detail::track_verdict.
        for (std::size_t i = 0; i < count; ++i)
            verdicts[i] = detail::track_verdict(r[i], b + i, tracks[i].x, tracks[i].y, an + i, verdict_rule());
        if (geo) {
            // The geometric check of the tracks kept so far, from their previous to their new position: on the host,
            // after the frame's wait (the same rules, the same tracks on both backends), or read from the device
            // (geo_enqueue).
            const int L = cfg.geometric_check.baseline_frames;
            const bool baseline = L > 1;
            if (geo_device) {
                geo->finish_device(geo_outlier.data(), in_flight_count);
            } else {
                std::array<double, 9> R_base{};
                const bool has_base_prior = geo_bases(count, R_base);
                if (count == 0)
                    geo->clear();
                else
                    geo->run(verdicts.data(), be->origins(), in_flight_count, has_prior ? prior.data() : nullptr,
                             geo_outlier.data(), baseline ? base.data() : nullptr,
                             has_base_prior ? R_base.data() : nullptr);
            }
            geo_device = false;
            if (baseline) detail::geo_prior_push(prior_run, has_prior ? &prior : nullptr, L);  // joins, or ends the run
            for (std::size_t i = 0; i < count; ++i)
                if (geo_outlier[i]) verdicts[i].status = TrackStatus::Outlier;
        }
        // Re-anchoring trusts the frame-to-frame estimate where it disagrees with the fit against the first
        // observation, and makes it the track's reference for good: an error it has is kept for the rest of the
        // track, unseen by the residual test (which compares consecutive frames). So only an estimate that can be
        // trusted is re-anchored: one that converged (not NotConverged: out of iterations, typically crawling along
        // an edge), made where the level-0 template lies inside the frame at both the previous and the new
        // position. At the frame's edge the template reads clamped edge pixels (the border rule), which do not
        // move with the scene and pull the estimate along the edge; re-anchored there, a track stuck to the edge
        // would follow it while its point moves on or leaves the view. Otherwise the track is lost (LostAnchor).
        // Applied after the verdicts and the geometric check, which see the same tracks on both backends.
        if (cfg.anchor.enabled && cfg.anchor.reanchor)
            for (std::size_t i = 0; i < count; ++i) {
                detail::TrackVerdict& v = verdicts[i];
                if (v.status == TrackStatus::Tracked && v.reanchor != 0 &&
                    (r[i].status == TrackStatus::NotConverged ||
                     !(template_in_frame(tracks[i].x, tracks[i].y) && template_in_frame(v.x, v.y)))) {
                    v.status = TrackStatus::LostAnchor;
                    v.reanchor = 0;
                }
            }
        for (std::size_t i = 0; i < count; ++i) {
            Track t = tracks[i];
            const LkResult& f = r[i];
            const detail::TrackVerdict& v = verdicts[i];
            const TrackStatus st = v.status;
            const float x = v.x, y = v.y;
            const bool reanchor = v.reanchor != 0;
            t.prev_x = t.x;
            t.prev_y = t.y;
            t.x = x;
            t.y = y;
            t.gain = f.gain;
            t.offset = f.offset;
            t.residual = f.residual;
            t.status = st;
            if (st == TrackStatus::Tracked) {
                ++t.age;
                next.push_back(t);
                next_slots.push_back(slots[i]);
                if (track_history) {
                    detail::GeoHistory hh = history[i];
                    detail::geo_history_push(hh, x, y, cfg.geometric_check.baseline_frames);
                    next_history.push_back(hh);
                }
                if (cfg.anchor.enabled) {
                    detail::AnchorState a = detail::anchor_after_frame(an[i], f.x, f.y);
                    if (reanchor) {
                        // The new reference: this frame's patch at the frame-to-frame estimate.
                        a = detail::AnchorState{};
                        a.x = x;
                        a.y = y;
                        be->new_points()[restored] = {x, y};
                        be->new_slots()[restored] = slots[i];
                        ++restored;
                    }
                    next_anchors.push_back(a);
                }
            } else {
                lost.push_back(t);
                if (slots[i] >= 0) free_slots.push_back(slots[i]);
            }
        }
        tracks.swap(next);
        slots.swap(next_slots);
        anchors.swap(next_anchors);
        history.swap(next_history);
    }

    /// Whether this frame re-detects (no live track, or fewer than redetect_fraction * target_features); when it
    /// does, the detection is enqueued with every grid cell that holds a live track masked (redetect_end
    /// collects it).
    void redetect_begin() {
        const int live = static_cast<int>(tracks.size());
        recent_losses[static_cast<std::size_t>(loss_at)] = in_flight_count - live;
        loss_at = (loss_at + 1) % static_cast<int>(recent_losses.size());
        redetected = false;
        if (!detail::redetect_wanted(live, cfg.redetect_fraction, cfg.target_features)) return;
        redetected = true;
        std::fill(cell_mask.begin(), cell_mask.end(), std::uint8_t{0});
        for (const Track& t : tracks)
            cell_mask[static_cast<std::size_t>(detail::redetect_cell(t.x, t.y, cfg.detector.cell_width,
                                                                     cfg.detector.cell_height, grid.width,
                                                                     grid.height))] = 1;
        if (be->detection_ran(cell_mask.data())) return;  // planned on the device with this mask: collected as is
        be->detect_async(cell_mask.data(), grid);
    }

    /// The end of redetect_begin's detection: adds the best new keypoints by score; returns how many new tracks'
    /// reference patches it staged after the re-anchored ones (entries restored .. restored + n - 1 of the
    /// backend's new_points/new_slots).
    int redetect_end() {
        if (!redetected) return 0;
        const int live = static_cast<int>(tracks.size());
        be->detect_wait(candidates);
        // Best score first; ties by position (a total order: no allocation, unlike stable_sort).
        std::sort(candidates.begin(), candidates.end(), [](const Keypoint& a, const Keypoint& b) {
            if (a.score != b.score) return a.score > b.score;
            if (a.y != b.y) return a.y < b.y;
            if (a.x != b.x) return a.x < b.x;
            return a.level < b.level;
        });
        const bool stored = cfg.lk.template_source == TemplateSource::FirstFrame || cfg.anchor.enabled;
        int added = 0;
        for (const Keypoint& k : candidates) {
            if (live + added >= cfg.target_features) break;
            if (!detail::inside(frame_box, k.x, k.y, template_side, 1)) continue;
            Track t;
            t.id = next_id++;
            t.x = t.prev_x = k.x;
            t.y = t.prev_y = k.y;
            t.score = k.score;
            t.level = k.level;
            std::int32_t slot = -1;
            if (stored) {
                slot = free_slots.back();
                free_slots.pop_back();
                be->new_points()[restored + added] = {k.x, k.y};
                be->new_slots()[restored + added] = slot;
            }
            tracks.push_back(t);
            slots.push_back(slot);
            if (track_history) {
                detail::GeoHistory hh{};
                detail::geo_history_push(hh, k.x, k.y, cfg.geometric_check.baseline_frames);
                history.push_back(hh);
            }
            if (cfg.anchor.enabled) {
                detail::AnchorState a;
                a.x = k.x;
                a.y = k.y;
                anchors.push_back(a);
            }
            ++added;
        }
        return stored ? added : 0;
    }
};

FeatureTracker::FeatureTracker(int width, int height, const TrackerConfig& cfg, Backend backend)
    : FeatureTracker(width, height, cfg, backend, cfg.lk.pyramid.levels) {}

FeatureTracker::FeatureTracker(int width, int height, const TrackerConfig& cfg, Backend backend, int pyramid_levels) {
    const char* where = "FeatureTracker";
    validate(cfg, where);
    detail::check_range(where, "width", width, kMinLevelSide, kMaxImageSide);
    detail::check_range(where, "height", height, kMinLevelSide, kMaxImageSide);
    (void)pyramid_sizes(width, height, cfg.lk.pyramid);  // throws naming 'levels' when too many for the frame
    if (pyramid_levels < cfg.lk.pyramid.levels) pyramid_levels = cfg.lk.pyramid.levels;
    (void)pyramid_sizes(width, height, PyramidConfig{pyramid_levels, cfg.lk.pyramid.scale});
    validate_image_size(width, height, cfg.detector, where);  // the detector's border and levels fit
    if (backend != Backend::Cuda && backend != Backend::Cpu)
        detail::fail(where, "backend", "must be Backend::Cuda or Backend::Cpu");
    auto m = std::make_unique<Impl>();
    m->width = width;
    m->height = height;
    m->cfg = cfg;
    m->backend = backend;
    if (backend == Backend::Cuda) {
        detail::require_cuda(where);
        m->be = detail::make_cuda_tracker_backend(width, height, cfg, pyramid_levels);
    } else {
        m->be = detail::make_cpu_tracker_backend(width, height, cfg, pyramid_levels);
    }
    m->grid = grid_size(width, height, cfg.detector);
    m->cell_mask.assign(static_cast<std::size_t>(m->grid.width) * m->grid.height, 0);
    m->frame_box = {nullptr, width, height, static_cast<std::size_t>(width)};
    m->template_side = cfg.lk.patch_size;
    m->lk_setup = detail::make_tracker_lk_setup(cfg);
    m->anchor_setup = detail::make_anchor_setup(cfg);
    const auto cap = static_cast<std::size_t>(cfg.target_features);
    m->tracks.reserve(cap);
    m->lost.reserve(cap);
    m->next.reserve(cap);
    m->slots.reserve(cap);
    m->next_slots.reserve(cap);
    m->free_slots.reserve(cap);
    m->anchors.reserve(cap);
    m->next_anchors.reserve(cap);
    m->track_history = cfg.geometric_check.enabled && cfg.geometric_check.baseline_frames > 1;
    if (m->track_history) {
        m->history.reserve(cap);
        m->next_history.reserve(cap);
        m->base.resize(cap);
    }
    m->candidates.reserve(static_cast<std::size_t>(m->grid.width) * m->grid.height * 8 + 1);  // cells * per_cell max
    for (int s = cfg.target_features - 1; s >= 0; --s) m->free_slots.push_back(s);
    m->verdicts.resize(cap);
    if (cfg.geometric_check.enabled) {
        const Camera& cam = cfg.geometric_check.camera;
        detail::check(cam.width == width && cam.height == height, where, "geometric_check.camera", [&] {
            return "is " + detail::to_text(cam.width) + "x" + detail::to_text(cam.height) + ", the frames are " +
                   detail::to_text(width) + "x" + detail::to_text(height);
        });
        m->geo = std::make_unique<detail::GeometricCheck>(cfg.geometric_check, cfg.target_features);
        if (backend == Backend::Cuda) m->geo->enable_device();
        m->geo_outlier.resize(cap);
    }
    impl_ = std::move(m);
}

FeatureTracker::FeatureTracker(FeatureTracker&&) noexcept = default;
FeatureTracker& FeatureTracker::operator=(FeatureTracker&&) noexcept = default;
FeatureTracker::~FeatureTracker() = default;

FeatureTracker::Impl& FeatureTracker::impl(const char* where) const {
    if (!impl_) detail::empty_object("FeatureTracker", where);
    return *impl_;
}

const TrackerConfig& FeatureTracker::config() const { return impl("config").cfg; }
Backend FeatureTracker::backend() const { return impl("backend").backend; }
int FeatureTracker::width() const { return impl("width").width; }
int FeatureTracker::height() const { return impl("height").height; }
const std::vector<Track>& FeatureTracker::tracks() const { return impl("tracks").tracks; }
const std::vector<Track>& FeatureTracker::lost_tracks() const { return impl("lost_tracks").lost; }
std::int64_t FeatureTracker::frame_count() const { return impl("frame_count").frames; }
bool FeatureTracker::redetected() const { return impl("redetected").redetected; }
const GeometricCheckResult& FeatureTracker::geometric_check() const {
    const Impl& m = impl("geometric_check");
    return m.geo ? m.geo->result() : m.no_check;
}

const std::vector<Track>& FeatureTracker::track(HostView frame, const std::vector<Point2f>* predictions,
                                                const std::array<double, 9>* rotation_prior) {
    track_async(frame, nullptr, predictions, rotation_prior);
    return finish();
}

void FeatureTracker::track_async(HostView frame, StreamHandle stream, const std::vector<Point2f>* predictions,
                                 const std::array<double, 9>* rotation_prior) {
    const char* where = "FeatureTracker::track_async";
    Impl& m = impl("track_async");
    validate_view(where, "frame", frame);
    m.check_frame(where, frame.width, frame.height);
    const int n = m.stage(where, predictions, rotation_prior);
    m.be->set_redetect_hint(m.redetect_hint(n));
    m.be->start(frame, n, stream);
    if (m.backend == Backend::Cuda) m.geo_enqueue(n, stream);  // the check, on the frame's stream
    m.in_flight = true;
    m.in_flight_count = n;
}

void FeatureTracker::track_async(DeviceView frame, StreamHandle stream, const std::vector<Point2f>* predictions,
                                 const std::array<double, 9>* rotation_prior) {
    const char* where = "FeatureTracker::track_async";
    Impl& m = impl("track_async");
    validate_view(where, "frame", frame);
    m.check_frame(where, frame.width, frame.height);
    if (m.backend != Backend::Cuda)
        throw StateError("kestrel: FeatureTracker::track_async: a device frame needs Backend::Cuda");
    const int n = m.stage(where, predictions, rotation_prior);
    m.be->set_redetect_hint(m.redetect_hint(n));
    m.be->start(frame, n, stream);
    if (m.backend == Backend::Cuda) m.geo_enqueue(n, stream);  // the check, on the frame's stream
    m.in_flight = true;
    m.in_flight_count = n;
}

const std::vector<Track>& FeatureTracker::finish() {
    finish_begin();
    return finish_end();
}

void FeatureTracker::finish_begin() {
    Impl& m = impl("finish");
    if (!m.in_flight) throw StateError("kestrel: FeatureTracker::finish: no frame in flight (call track_async first)");
    m.in_flight = false;
    m.be->wait();
    m.update_tracks();
    m.redetect_begin();
}

const std::vector<Track>& FeatureTracker::finish_end() {
    Impl& m = impl("finish");
    const int to_store = m.restored + m.redetect_end();  // re-anchored tracks, then new ones: one store
    if (to_store > 0) m.be->store_templates(to_store);
    m.be->swap();
    ++m.frames;
    return m.tracks;
}

detail::TrackerBackend& FeatureTracker::backend_internal() const { return *impl("backend").be; }

void FeatureTracker::reset() {
    Impl& m = impl("reset");
    if (m.in_flight) throw StateError("kestrel: FeatureTracker::reset: a frame is in flight; call finish() first");
    m.tracks.clear();
    m.lost.clear();
    m.slots.clear();
    m.anchors.clear();
    m.history.clear();
    m.prior_run.n = 0;
    m.free_slots.clear();
    for (int s = m.cfg.target_features - 1; s >= 0; --s) m.free_slots.push_back(s);
    m.redetected = false;
    m.recent_losses.fill(0);
    if (m.geo) m.geo->clear();
}

}  // namespace kestrel
