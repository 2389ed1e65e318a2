// StereoTracker: the left FeatureTracker (temporal tracking, re-detection), the right image's pyramid (built on a
// second stream beside the left frame's work on the CUDA backend, or by the right FeatureTracker with track_right),
// and the matching (stereo_matcher.hpp) with the verdicts of detail/stereo_rules.hpp. Per frame:
//   1. track_async: each track live before the frame gets its seed offset: its last matched right-minus-left
//      offset (matched in the previous frame, a trusted seed: refined on the finest match.refine_levels levels and
//      matched back only when its match lands farther than match.trust_distance from the seed; an older offset:
//      searched on every level from it; detail::match_refines, detail::round_trip_needed), else the median carried
//      offset of the tracks in its grid cell and the 8 around it at their previous positions (the tracker's
//      detection grid), else zero; rectified rigs seed on the same row. The CUDA backend enqueues their matching
//      right after the left tracking, in the same stream: each from the position detail::track_verdict gives it
//      (the host bookkeeping's rule), so no extra wait is needed for them.
//   2. finish: the left tracker's finish (and the right one's). Tracks born in this frame get the median carried
//      offset of the live tracks around their position, else zero. Every track whose match is not already done
//      (all on the CPU backend; on the CUDA one the new tracks, and any whose staged position differed from the
//      bookkeeping's, which the rule makes impossible but which is checked) is matched in one more pass.
//   3. the verdicts and depths on the host; the matched tracks' offsets are carried to the next frame (a track
//      keeps its last one while unmatched).
// The seeds depend on the frame's data only, never on the backend or on timing: both backends give the same result.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kestrel/detail/stereo_rules.hpp"
#include "src/core/backend.hpp"
#include "src/geometry/camera_internal.hpp"
#include "src/pyramid/pyramid_cpu.hpp"
#include "src/track/feature_tracker_backend.hpp"
#include "stereo_matcher.hpp"

namespace kestrel {

namespace {

/// Median offsets of reference entries around query positions (the seeding's neighbour rule): the reference
/// entries are bucketed by grid cell; a query takes the lower median of x and of y over the entries in its cell
/// and the 8 around it. Allocation-free after construction.
class NeighbourMedian {
public:
    NeighbourMedian(Size2 grid, int cell_w, int cell_h, std::size_t capacity)
        : grid_(grid), cw_(cell_w), ch_(cell_h),
          start_(static_cast<std::size_t>(grid.width) * static_cast<std::size_t>(grid.height) + 1, 0),
          cursor_(start_.size(), 0), items_(capacity), mx_(capacity), my_(capacity) {}

    int cell_of(float x, float y) const {
        const int cx = std::clamp(static_cast<int>(x) / cw_, 0, grid_.width - 1);
        const int cy = std::clamp(static_cast<int>(y) / ch_, 0, grid_.height - 1);
        return cy * grid_.width + cx;
    }

    /// The reference entries: n positions with their offsets (only those with has[i] != 0 count).
    template <class Pos>
    void build(int n, Pos&& pos, const std::int32_t* has, const Point2f* off) {
        off_ = off;
        std::fill(start_.begin(), start_.end(), 0);
        for (int i = 0; i < n; ++i)
            if (has[i] != 0) {
                const Point2f p = pos(i);
                ++start_[static_cast<std::size_t>(cell_of(p.x, p.y)) + 1];
            }
        for (std::size_t c = 1; c < start_.size(); ++c) start_[c] += start_[c - 1];
        std::copy(start_.begin(), start_.end(), cursor_.begin());
        for (int i = 0; i < n; ++i)
            if (has[i] != 0) {
                const Point2f p = pos(i);
                items_[static_cast<std::size_t>(cursor_[static_cast<std::size_t>(cell_of(p.x, p.y))]++)] = i;
            }
    }

    /// The median offset around (x, y); false when no entry is near.
    bool median(float x, float y, Point2f& out) {
        const int c = cell_of(x, y);
        const int cx = c % grid_.width, cy = c / grid_.width;
        std::size_t m = 0;
        for (int v = std::max(cy - 1, 0); v <= std::min(cy + 1, grid_.height - 1); ++v)
            for (int u = std::max(cx - 1, 0); u <= std::min(cx + 1, grid_.width - 1); ++u) {
                const auto cc = static_cast<std::size_t>(v * grid_.width + u);
                for (int j = start_[cc]; j < start_[cc + 1]; ++j) {
                    const Point2f& o = off_[items_[static_cast<std::size_t>(j)]];
                    mx_[m] = o.x;
                    my_[m] = o.y;
                    ++m;
                }
            }
        if (m == 0) return false;
        const auto mid = static_cast<std::ptrdiff_t>((m - 1) / 2);  // the lower median: a fixed element
        std::nth_element(mx_.begin(), mx_.begin() + mid, mx_.begin() + static_cast<std::ptrdiff_t>(m));
        std::nth_element(my_.begin(), my_.begin() + mid, my_.begin() + static_cast<std::ptrdiff_t>(m));
        out = {mx_[static_cast<std::size_t>(mid)], my_[static_cast<std::size_t>(mid)]};
        return true;
    }

private:
    Size2 grid_;
    int cw_, ch_;
    std::vector<std::int32_t> start_, cursor_, items_;
    std::vector<float> mx_, my_;
    const Point2f* off_ = nullptr;
};

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

}  // namespace

struct StereoTracker::Impl {
    int width = 0, height = 0;
    StereoRig rig;
    StereoConfig cfg;
    Backend backend = Backend::Cuda;
    PyramidConfig pyramid;  // both images': the larger level count of the tracking and the matching
    FeatureTracker left;
    std::unique_ptr<FeatureTracker> right;  // track_right
    std::vector<Track> no_tracks;           // right_tracks() without track_right
    std::unique_ptr<detail::StereoMatcher> matcher;
    // The right image's pyramid when no right tracker builds it.
    std::vector<HostImage> right_host;
    detail::PyramidScratch scratch;
    DevicePyramid right_device;
    detail::PyramidCompanion companion{};
    StreamHandle stream = nullptr;
    bool in_flight = false;
    // Raw rigs: the cameras' unprojection and the essential matrix.
    detail::CameraSetup cam_left{}, cam_right{};
    double E[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    double baseline = 0;  // |t_rl|
    // Results, and the offsets carried by track id (ascending ids, as the tracks are).
    std::vector<StereoTrack> tracks;
    std::vector<std::uint64_t> known_ids, next_ids;
    std::vector<Point2f> known_off, next_off;
    std::vector<std::int32_t> known_fresh, next_fresh;  // the offset is the previous frame's match (a trusted seed)
    // Step 1: the tracks live before the frame, their seed offsets and seed classes (detail::match_seed; pending
    // until finish).
    int pending = 0;
    bool staged = false;  // their matching was enqueued in the frame's stream (CUDA)
    std::vector<std::uint64_t> pend_ids;
    std::vector<Point2f> pend_off;
    std::vector<std::int32_t> pend_refine, has;
    // Step 2: each live track's source of results: >= 0 the staged match k, < 0 the pass entry -1 - m.
    std::vector<std::int32_t> source, carried;
    std::vector<Point2f> carried_off;
    NeighbourMedian neighbours;
    const std::vector<Track>* around = nullptr;  // the tracks of the last carried_around
    bool neighbours_built = false;

    Impl(int w, int h, const StereoRig& r, const StereoConfig& c, Backend b)
        : width(w), height(h), rig(r), cfg(c), backend(b),
          pyramid{std::max(c.tracker.lk.pyramid.levels, c.match.lk.pyramid.levels), c.tracker.lk.pyramid.scale},
          left(w, h, c.tracker, b, pyramid.levels),
          neighbours(grid_size(w, h, c.tracker.detector), c.tracker.detector.cell_width, c.tracker.detector.cell_height,
                     static_cast<std::size_t>(c.tracker.target_features)) {}

    int capacity() const { return cfg.tracker.target_features; }

    template <class View>
    void check_pair(const char* where, const View& l, const View& r) const {
        const auto check_frame = [&](const char* param, const View& v) {
            validate_view(where, param, v);
            detail::check(v.width == width && v.height == height, where, param, [&] {
                return "is " + detail::to_text(v.width) + "x" + detail::to_text(v.height) + ", the tracker was made for " +
                       detail::to_text(width) + "x" + detail::to_text(height);
            });
        };
        check_frame("left", l);
        check_frame("right", r);
        if (in_flight)
            throw StateError(std::string("kestrel: StereoTracker::") + where +
                             ": the previous frame is still in flight; call finish() first");
    }

    // The carried offsets of `tracks` (ascending ids), by a merge walk: carried[i] = index into known_off or -1,
    // has[i] its seed class (detail::match_seed: 0 none, non-zero carried) and carried_off[i] its value.
    // `neighbours` over those with one, at their positions, is built when first asked for (neighbour_median).
    void carried_around(const std::vector<Track>& tracks) {
        const std::size_t n = tracks.size();
        std::size_t k = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t id = tracks[i].id;
            while (k < known_ids.size() && known_ids[k] < id) ++k;
            const bool found = k < known_ids.size() && known_ids[k] == id;
            carried[i] = found ? static_cast<std::int32_t>(k) : -1;
            has[i] = detail::match_seed(found, found && known_fresh[k] != 0);
            carried_off[i] = found ? known_off[k] : Point2f{};
        }
        around = &tracks;
        neighbours_built = false;
    }

    // The median carried offset around (x, y) of the tracks of the last carried_around; false when none is near.
    bool neighbour_median(float x, float y, Point2f& out) {
        if (!neighbours_built) {
            const std::vector<Track>& tracks = *around;
            neighbours.build(static_cast<int>(tracks.size()), [&](int i) {
                const Track& t = tracks[static_cast<std::size_t>(i)];
                return Point2f{t.x, t.y};
            }, has.data(), carried_off.data());
            neighbours_built = true;
        }
        return neighbours.median(x, y, out);
    }

    Point2f rectify_seed(Point2f off) const { return rig.type == RigType::Rectified ? Point2f{off.x, 0.0f} : off; }

    // Step 1: the pending tracks' seed offsets and seed classes (from the left tracker's tracks() before its finish:
    // the tracks live before the frame).
    void stage_pending() {
        const std::vector<Track>& prev = left.tracks();
        pending = static_cast<int>(prev.size());
        carried_around(prev);
        for (int i = 0; i < pending; ++i) {
            const Track& t = prev[static_cast<std::size_t>(i)];
            pend_ids[static_cast<std::size_t>(i)] = t.id;
            Point2f off{};
            if (has[static_cast<std::size_t>(i)])
                off = carried_off[static_cast<std::size_t>(i)];
            else
                (void)neighbour_median(t.x, t.y, off);
            pend_off[static_cast<std::size_t>(i)] = rectify_seed(off);
            pend_refine[static_cast<std::size_t>(i)] = has[static_cast<std::size_t>(i)];
        }
    }

    // CUDA: both frames' work on `stream`: with track_right each tracker's own; otherwise the left tracker's, with the
    // right image uploaded into right_device and built on a second stream (`companion`). Then step 1: the seeds, on
    // the host while the device runs the frames (the left tracker's tracks() are the previous frame's until its
    // finish), and their matching.
    template <class View>
    void enqueue_frames(const View& l, const View& r, const detail::PyramidCompanion& c,
                        const std::vector<Point2f>* predictions, const std::array<double, 9>* prior) {
        if (right) {
            left.track_async(l, stream, predictions, prior);
            right->track_async(r, stream);
        } else {
            companion = c;
            detail::TrackerBackend& be = left.backend_internal();
            be.set_companion(&companion);
            try {
                left.track_async(l, stream, predictions, prior);
            } catch (...) {
                be.set_companion(nullptr);
                throw;
            }
        }
        in_flight = true;
        stage_pending();
        enqueue_pending();
    }

    // Step 1 (CUDA): the pending tracks' matching, enqueued after the left (and right) tracker's launches.
    void enqueue_pending() {
        staged = false;
        if (!matcher->can_stage() || pending == 0) return;
        detail::TrackerBackend& be = left.backend_internal();
        std::copy(pend_off.begin(), pend_off.begin() + pending, matcher->stage_offsets());
        std::copy(pend_refine.begin(), pend_refine.begin() + pending, matcher->stage_refine());
        detail::TrackerFrame f;
        f.lk = be.results();
        f.back = cfg.tracker.forward_backward ? be.back_results() : nullptr;
        f.origins = be.origins();
        f.anchor = cfg.tracker.anchor.enabled ? be.anchor_results() : nullptr;
        f.rule = {cfg.tracker.forward_backward ? 1 : 0, cfg.tracker.fb_max_error, cfg.tracker.anchor.enabled ? 1 : 0,
                  cfg.tracker.anchor.reanchor ? 1 : 0, cfg.tracker.anchor.max_residual, cfg.tracker.anchor.max_distance};
        const DevicePyramid& r = right ? *right->backend_internal().device_frame_pyramid() : right_device;
        matcher->enqueue_staged(*be.device_frame_pyramid(), r, f, pending, stream);
        staged = true;
    }

    // Step 2: every live track's source, the pass of those not matched yet, and the pass itself.
    void match(const std::vector<Track>& live) {
        const int n = static_cast<int>(live.size());
        // Seeds of new tracks: the carried offsets of the live tracks around them (before this frame's matches).
        carried_around(live);
        Point2f* pts = matcher->points();
        LkGuess* seeds = matcher->seeds();
        std::int32_t* refine = matcher->refine();
        const Point2f* staged_pts = staged ? matcher->staged_points() : nullptr;
        int m = 0;
        std::size_t k = 0;
        for (int i = 0; i < n; ++i) {
            const Track& t = live[static_cast<std::size_t>(i)];
            while (k < static_cast<std::size_t>(pending) && pend_ids[k] < t.id) ++k;
            Point2f off{};
            std::int32_t ref = 0;
            if (k < static_cast<std::size_t>(pending) && pend_ids[k] == t.id) {  // live before the frame
                if (staged_pts != nullptr && same_bits(staged_pts[k].x, t.x) && same_bits(staged_pts[k].y, t.y)) {
                    source[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(k);
                    continue;
                }
                off = pend_off[k];
                ref = pend_refine[k];
            } else {  // born in this frame
                if (neighbour_median(t.x, t.y, off)) off = rectify_seed(off);
            }
            pts[m] = {t.x, t.y};
            seeds[m] = LkGuess{t.x + off.x, t.y + off.y, 1.0f, 0.0f};
            refine[m] = ref;
            source[static_cast<std::size_t>(i)] = -1 - m;
            ++m;
        }
        if (backend == Backend::Cpu) {
            const std::vector<HostImage>& r = right ? *right->backend_internal().host_frame_pyramid() : right_host;
            matcher->match(*left.backend_internal().host_frame_pyramid(), r, m);
        } else {
            const DevicePyramid& r = right ? *right->backend_internal().device_frame_pyramid() : right_device;
            matcher->match(*left.backend_internal().device_frame_pyramid(), r, m, stream);
        }
    }

    // Step 3: the verdicts, and the offsets carried to the next frame.
    void collect(const std::vector<Track>& live) {
        const int n = static_cast<int>(live.size());
        const float nan = std::numeric_limits<float>::quiet_NaN();
        tracks.resize(static_cast<std::size_t>(n));
        next_ids.clear();
        next_off.clear();
        next_fresh.clear();
        for (int i = 0; i < n; ++i) {
            const Track& t = live[static_cast<std::size_t>(i)];
            const std::int32_t src = source[static_cast<std::size_t>(i)];
            const LkResult& f = src >= 0 ? matcher->staged_forward()[src] : matcher->forward()[-1 - src];
            const LkResult& b = src >= 0 ? matcher->staged_backward()[src] : matcher->backward()[-1 - src];
            StereoTrack& s = tracks[static_cast<std::size_t>(i)];
            s.left = t;
            detail::StereoEvidence e;
            e.forward = f.status;
            e.backward = b.status;
            const bool fwd = detail::lk_usable(f.status);
            if (fwd) {
                e.round_trip = std::hypot(static_cast<double>(b.x) - t.x, static_cast<double>(b.y) - t.y);
                e.disparity = static_cast<double>(t.x) - static_cast<double>(f.x);
                if (rig.type == RigType::Rectified) {
                    e.epipolar = detail::epipolar_distance_rectified(t.y, f.y);
                    e.depth = rig.focal * rig.baseline / e.disparity;
                } else {
                    Point2d nl, nr;
                    const UnprojectStatus sl = detail::unproject_pixel(cam_left, t.x, t.y, nl);
                    const UnprojectStatus sr = detail::unproject_pixel(cam_right, f.x, f.y, nr);
                    e.disparity = NAN;  // the rectified-equivalent disparity of the triangulated depth, below
                    e.depth = NAN;
                    if (sl == UnprojectStatus::Ok && sr == UnprojectStatus::Ok) {
                        e.epipolar = detail::epipolar_distance_raw(E, nl.x, nl.y, nr.x, nr.y, rig.right.fx);
                        e.depth = detail::triangulate_depth(rig.R_rl.data(), rig.t_rl.data(), nl.x, nl.y, nr.x, nr.y);
                        e.disparity = detail::equivalent_disparity(rig.left.fx, baseline, e.depth);
                    }
                }
            }
            s.status = detail::stereo_verdict(e, cfg.match, rig.type);
            const bool shown = fwd && s.status != StereoStatus::NoMatch;
            s.right_x = shown ? f.x : nan;
            s.right_y = shown ? f.y : nan;
            s.disparity = shown ? static_cast<float>(e.disparity) : nan;
            s.depth = s.status == StereoStatus::Matched ? static_cast<float>(e.depth) : nan;
            // The offset this track seeds with next frame (carried[i] is still this frame's lookup).
            const std::int32_t kk = carried[static_cast<std::size_t>(i)];
            if (s.status == StereoStatus::Matched) {
                next_ids.push_back(t.id);
                next_off.push_back({f.x - t.x, f.y - t.y});
                next_fresh.push_back(1);
            } else if (kk >= 0) {
                next_ids.push_back(t.id);
                next_off.push_back(known_off[static_cast<std::size_t>(kk)]);
                next_fresh.push_back(0);
            }
        }
        known_ids.swap(next_ids);
        known_off.swap(next_off);
        known_fresh.swap(next_fresh);
    }
};

StereoTracker::StereoTracker(int width, int height, const StereoRig& rig, const StereoConfig& cfg, Backend backend) {
    const char* where = "StereoTracker";
    validate(cfg, where);
    validate(rig, "StereoTracker: rig");
    if (rig.type == RigType::Raw) {
        detail::check(rig.left.width == width && rig.left.height == height, where, "rig.left",
                      "is " + detail::to_text(rig.left.width) + "x" + detail::to_text(rig.left.height) +
                          ", the frames are " + detail::to_text(width) + "x" + detail::to_text(height));
        detail::check(rig.right.width == width && rig.right.height == height, where, "rig.right",
                      "is " + detail::to_text(rig.right.width) + "x" + detail::to_text(rig.right.height) +
                          ", the frames are " + detail::to_text(width) + "x" + detail::to_text(height));
    }
    if (backend != Backend::Cuda && backend != Backend::Cpu)
        detail::fail(where, "backend", "must be Backend::Cuda or Backend::Cpu");
    if (backend == Backend::Cuda) detail::require_cuda(where);
    (void)pyramid_sizes(width, height, cfg.match.lk.pyramid);  // names 'levels' when the frame is too small for them
    auto m = std::make_unique<Impl>(width, height, rig, cfg, backend);  // the left tracker checks the size
    const int cap = m->capacity();
    if (cfg.track_right) {
        TrackerConfig rc = cfg.tracker;
        rc.geometric_check.enabled = false;  // the check's camera is the left one
        m->right.reset(new FeatureTracker(width, height, rc, backend, m->pyramid.levels));
    }
    if (backend == Backend::Cuda) {
        m->matcher = detail::make_cuda_stereo_matcher(cfg, cap);
        if (!cfg.track_right) m->right_device = DevicePyramid(width, height, m->pyramid);
    } else {
        m->matcher = detail::make_cpu_stereo_matcher(cfg, cap, cfg.tracker.threads);
    }
    if (rig.type == RigType::Raw) {
        m->cam_left = detail::make_camera_setup(rig.left, UndistortConfig{}, "StereoTracker: rig.left");
        m->cam_right = detail::make_camera_setup(rig.right, UndistortConfig{}, "StereoTracker: rig.right");
        detail::essential_from_rig(m->rig.R_rl.data(), m->rig.t_rl.data(), m->E);
        m->baseline = std::sqrt(rig.t_rl[0] * rig.t_rl[0] + rig.t_rl[1] * rig.t_rl[1] + rig.t_rl[2] * rig.t_rl[2]);
    }
    const auto ucap = static_cast<std::size_t>(cap);
    m->tracks.reserve(ucap);
    m->known_ids.reserve(ucap);
    m->next_ids.reserve(ucap);
    m->known_off.reserve(ucap);
    m->next_off.reserve(ucap);
    m->known_fresh.reserve(ucap);
    m->next_fresh.reserve(ucap);
    m->pend_ids.assign(ucap, 0);
    m->pend_off.assign(ucap, Point2f{});
    m->pend_refine.assign(ucap, 0);
    m->has.assign(ucap, 0);
    m->source.assign(ucap, 0);
    m->carried.assign(ucap, -1);
    m->carried_off.assign(ucap, Point2f{});
    impl_ = std::move(m);
}

StereoTracker::StereoTracker(StereoTracker&&) noexcept = default;
StereoTracker& StereoTracker::operator=(StereoTracker&&) noexcept = default;
StereoTracker::~StereoTracker() = default;

StereoTracker::Impl& StereoTracker::impl(const char* where) const {
    if (!impl_) detail::empty_object("StereoTracker", where);
    return *impl_;
}

const StereoConfig& StereoTracker::config() const { return impl("config").cfg; }
const StereoRig& StereoTracker::rig() const { return impl("rig").rig; }
Backend StereoTracker::backend() const { return impl("backend").backend; }
int StereoTracker::width() const { return impl("width").width; }
int StereoTracker::height() const { return impl("height").height; }
const std::vector<StereoTrack>& StereoTracker::tracks() const { return impl("tracks").tracks; }
const std::vector<Track>& StereoTracker::lost_tracks() const { return impl("lost_tracks").left.lost_tracks(); }
const std::vector<Track>& StereoTracker::right_tracks() const {
    const Impl& m = impl("right_tracks");
    return m.right ? m.right->tracks() : m.no_tracks;
}
const std::vector<Track>& StereoTracker::right_lost_tracks() const {
    const Impl& m = impl("right_lost_tracks");
    return m.right ? m.right->lost_tracks() : m.no_tracks;
}
std::int64_t StereoTracker::frame_count() const { return impl("frame_count").left.frame_count(); }
bool StereoTracker::redetected() const { return impl("redetected").left.redetected(); }

const std::vector<StereoTrack>& StereoTracker::track(HostView left, HostView right,
                                                     const std::vector<Point2f>* predictions,
                                                     const std::array<double, 9>* rotation_prior) {
    track_async(left, right, nullptr, predictions, rotation_prior);
    return finish();
}

void StereoTracker::track_async(HostView left, HostView right, StreamHandle stream,
                                const std::vector<Point2f>* predictions, const std::array<double, 9>* rotation_prior) {
    const char* where = "StereoTracker::track_async";
    Impl& m = impl("track_async");
    m.check_pair(where, left, right);
    m.stream = stream;
    if (m.backend == Backend::Cpu) {
        m.stage_pending();
        m.left.track_async(left, stream, predictions, rotation_prior);
        if (m.right)
            m.right->track_async(right, stream);
        else
            detail::build_pyramid_into(right, m.pyramid, m.right_host, m.scratch, nullptr);
        m.in_flight = true;
        return;
    }
    m.enqueue_frames(left, right, detail::PyramidCompanion{&m.right_device, right, DeviceView{}, false}, predictions,
                     rotation_prior);
}

void StereoTracker::track_async(DeviceView left, DeviceView right, StreamHandle stream,
                                const std::vector<Point2f>* predictions, const std::array<double, 9>* rotation_prior) {
    const char* where = "StereoTracker::track_async";
    Impl& m = impl("track_async");
    m.check_pair(where, left, right);
    if (m.backend != Backend::Cuda)
        throw StateError("kestrel: StereoTracker::track_async: device frames need Backend::Cuda");
    m.stream = stream;
    m.enqueue_frames(left, right, detail::PyramidCompanion{&m.right_device, HostView{}, right, true}, predictions,
                     rotation_prior);
}

const std::vector<StereoTrack>& StereoTracker::finish() {
    Impl& m = impl("finish");
    if (!m.in_flight) throw StateError("kestrel: StereoTracker::finish: no frame in flight (call track_async first)");
    m.in_flight = false;
    const std::vector<Track>& live = m.left.finish();
    if (m.right) m.right->finish();
    m.match(live);
    m.collect(live);
    return m.tracks;
}

void StereoTracker::reset() {
    Impl& m = impl("reset");
    if (m.in_flight) throw StateError("kestrel: StereoTracker::reset: a frame is in flight; call finish() first");
    m.left.reset();
    if (m.right) m.right->reset();
    m.tracks.clear();
    m.known_ids.clear();
    m.known_off.clear();
    m.known_fresh.clear();
    m.pending = 0;
}

}  // namespace kestrel
