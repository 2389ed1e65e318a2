// StereoTracker: the left FeatureTracker (temporal tracking, re-detection), the right image's pyramid (built in
// the left one's launch on the CUDA backend, or by the right FeatureTracker with track_right), and the matching
// (stereo_matcher.hpp) with the verdicts of detail/stereo_rules.hpp. Per frame, in finish():
//   1. the left tracker's finish (and the right one's): the frame's live left tracks, sorted by id;
//   2. each track's seed: its last matched right-minus-left offset; a track without one takes the median offset
//      of the tracks with one in its grid cell and the 8 around it (the tracker's detection grid), else zero;
//      rectified rigs seed on the same row;
//   3. the matching (left -> right, right -> left), then each track's verdict and depth on the host;
//   4. the matched tracks' offsets are kept for the next frame (a track keeps its last one while unmatched).
#include <algorithm>
#include <cmath>
#include <limits>

#include "kestrel/detail/stereo_rules.hpp"
#include "src/core/backend.hpp"
#include "src/geometry/camera_internal.hpp"
#include "src/pyramid/pyramid_cpu.hpp"
#include "src/track/feature_tracker_backend.hpp"
#include "stereo_matcher.hpp"

namespace kestrel {

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
    // Results, and the offsets kept by track id (ascending ids, as the tracks are).
    std::vector<StereoTrack> tracks;
    std::vector<std::uint64_t> known_ids, next_ids;
    std::vector<Point2f> known_off, next_off;
    // Seeding scratch: each track's known offset (or none), the per-cell lists, a median buffer.
    std::vector<std::int32_t> track_known;  // index into known_off, -1: none
    Size2 grid{};
    std::vector<std::int32_t> cell_start, cell_items, next_cursor;
    std::vector<float> med_x, med_y;

    Impl(int w, int h, const StereoRig& r, const StereoConfig& c, Backend b)
        : width(w), height(h), rig(r), cfg(c), backend(b),
          pyramid{std::max(c.tracker.lk.pyramid.levels, c.match.lk.pyramid.levels), c.tracker.lk.pyramid.scale},
          left(w, h, c.tracker, b, pyramid.levels) {}

    int capacity() const { return cfg.tracker.target_features; }

    template <class View>
    void check_pair(const char* where, const View& l, const View& r) const {
        validate_view(where, "left", l);
        validate_view(where, "right", r);
        detail::check(l.width == width && l.height == height, where, "left",
                      "is " + detail::to_text(l.width) + "x" + detail::to_text(l.height) + ", the tracker was made for " +
                          detail::to_text(width) + "x" + detail::to_text(height));
        detail::check(r.width == width && r.height == height, where, "right",
                      "is " + detail::to_text(r.width) + "x" + detail::to_text(r.height) + ", the tracker was made for " +
                          detail::to_text(width) + "x" + detail::to_text(height));
        if (in_flight)
            throw StateError(std::string("kestrel: StereoTracker::") + where +
                             ": the previous frame is still in flight; call finish() first");
    }

    // Step 2: the seeds of the live tracks, staged with their positions.
    void stage(const std::vector<Track>& live) {
        const int n = static_cast<int>(live.size());
        Point2f* pts = matcher->points();
        LkGuess* seeds = matcher->seeds();
        std::int32_t* refine = matcher->refine();
        // Each track's known offset, by a merge walk over the ascending ids.
        std::size_t k = 0;
        for (int i = 0; i < n; ++i) {
            const std::uint64_t id = live[static_cast<std::size_t>(i)].id;
            while (k < known_ids.size() && known_ids[k] < id) ++k;
            track_known[static_cast<std::size_t>(i)] = (k < known_ids.size() && known_ids[k] == id) ? static_cast<std::int32_t>(k) : -1;
        }
        // Cells of the tracks with a known offset (a counting sort into cell_items).
        const int cells = grid.width * grid.height;
        std::fill(cell_start.begin(), cell_start.end(), 0);
        const auto cell_of = [&](const Track& t) {
            const int cx = std::clamp(static_cast<int>(t.x) / cfg.tracker.detector.cell_width, 0, grid.width - 1);
            const int cy = std::clamp(static_cast<int>(t.y) / cfg.tracker.detector.cell_height, 0, grid.height - 1);
            return cy * grid.width + cx;
        };
        bool any_unknown = false;
        for (int i = 0; i < n; ++i) {
            if (track_known[static_cast<std::size_t>(i)] >= 0)
                ++cell_start[static_cast<std::size_t>(cell_of(live[static_cast<std::size_t>(i)])) + 1];
            else
                any_unknown = true;
        }
        if (any_unknown) {
            for (int c = 0; c < cells; ++c) cell_start[static_cast<std::size_t>(c) + 1] += cell_start[static_cast<std::size_t>(c)];
            std::int32_t* cursor = next_cursor.data();
            for (int c = 0; c < cells; ++c) cursor[c] = cell_start[static_cast<std::size_t>(c)];
            for (int i = 0; i < n; ++i)
                if (track_known[static_cast<std::size_t>(i)] >= 0)
                    cell_items[static_cast<std::size_t>(cursor[cell_of(live[static_cast<std::size_t>(i)])]++)] = i;
        }
        for (int i = 0; i < n; ++i) {
            const Track& t = live[static_cast<std::size_t>(i)];
            float dx = 0.0f, dy = 0.0f;
            const std::int32_t kk = track_known[static_cast<std::size_t>(i)];
            if (kk >= 0) {
                dx = known_off[static_cast<std::size_t>(kk)].x;
                dy = known_off[static_cast<std::size_t>(kk)].y;
            } else {
                const int c = cell_of(t);
                const int cx = c % grid.width, cy = c / grid.width;
                std::size_t m = 0;
                for (int y = std::max(cy - 1, 0); y <= std::min(cy + 1, grid.height - 1); ++y)
                    for (int x = std::max(cx - 1, 0); x <= std::min(cx + 1, grid.width - 1); ++x) {
                        const int cc = y * grid.width + x;
                        for (int j = cell_start[static_cast<std::size_t>(cc)]; j < cell_start[static_cast<std::size_t>(cc) + 1]; ++j) {
                            const Point2f& o = known_off[static_cast<std::size_t>(
                                track_known[static_cast<std::size_t>(cell_items[static_cast<std::size_t>(j)])])];
                            med_x[m] = o.x;
                            med_y[m] = o.y;
                            ++m;
                        }
                    }
                if (m > 0) {
                    // The lower median (a fixed element: deterministic).
                    const auto mid = static_cast<std::ptrdiff_t>((m - 1) / 2);
                    std::nth_element(med_x.begin(), med_x.begin() + mid, med_x.begin() + static_cast<std::ptrdiff_t>(m));
                    std::nth_element(med_y.begin(), med_y.begin() + mid, med_y.begin() + static_cast<std::ptrdiff_t>(m));
                    dx = med_x[static_cast<std::size_t>(mid)];
                    dy = med_y[static_cast<std::size_t>(mid)];
                }
            }
            if (rig.type == RigType::Rectified) dy = 0.0f;  // the epipolar line is the row
            pts[i] = {t.x, t.y};
            refine[i] = kk >= 0 ? 1 : 0;  // a carried seed: the finest refine_levels levels
            seeds[i] = LkGuess{t.x + dx, t.y + dy, 1.0f, 0.0f};
        }
    }

    // Step 3's verdicts and step 4.
    void collect(const std::vector<Track>& live) {
        const int n = static_cast<int>(live.size());
        const LkResult* f = matcher->forward();
        const LkResult* b = matcher->backward();
        const float nan = std::numeric_limits<float>::quiet_NaN();
        tracks.resize(static_cast<std::size_t>(n));
        next_ids.clear();
        next_off.clear();
        for (int i = 0; i < n; ++i) {
            const Track& t = live[static_cast<std::size_t>(i)];
            StereoTrack& s = tracks[static_cast<std::size_t>(i)];
            s.left = t;
            detail::StereoEvidence e;
            e.forward = f[i].status;
            e.backward = b[i].status;
            const bool fwd = detail::lk_usable(f[i].status);
            if (fwd) {
                e.round_trip = std::hypot(static_cast<double>(b[i].x) - t.x, static_cast<double>(b[i].y) - t.y);
                e.disparity = static_cast<double>(t.x) - static_cast<double>(f[i].x);
                if (rig.type == RigType::Rectified) {
                    e.epipolar = detail::epipolar_distance_rectified(t.y, f[i].y);
                    e.depth = rig.focal * rig.baseline / e.disparity;
                } else {
                    Point2d nl, nr;
                    const UnprojectStatus sl = detail::unproject_pixel(cam_left, t.x, t.y, nl);
                    const UnprojectStatus sr = detail::unproject_pixel(cam_right, f[i].x, f[i].y, nr);
                    if (sl == UnprojectStatus::Ok && sr == UnprojectStatus::Ok) {
                        e.epipolar = detail::epipolar_distance_raw(E, nl.x, nl.y, nr.x, nr.y, rig.right.fx);
                        e.depth = detail::triangulate_depth(rig.R_rl.data(), rig.t_rl.data(), nl.x, nl.y, nr.x, nr.y);
                    }
                }
            }
            s.status = detail::stereo_verdict(e, cfg.match, rig.type);
            s.right_x = fwd ? f[i].x : nan;
            s.right_y = fwd ? f[i].y : nan;
            s.disparity = fwd ? static_cast<float>(e.disparity) : nan;
            s.depth = s.status == StereoStatus::Matched ? static_cast<float>(e.depth) : nan;
            // Step 4: the offset this track seeds with next frame.
            const std::int32_t kk = track_known[static_cast<std::size_t>(i)];
            if (s.status == StereoStatus::Matched) {
                next_ids.push_back(t.id);
                next_off.push_back({f[i].x - t.x, f[i].y - t.y});
            } else if (kk >= 0) {
                next_ids.push_back(t.id);
                next_off.push_back(known_off[static_cast<std::size_t>(kk)]);
            }
        }
        known_ids.swap(next_ids);
        known_off.swap(next_off);
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
    if (cfg.track_right)
        m->right.reset(new FeatureTracker(width, height, cfg.tracker, backend, m->pyramid.levels));
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
    }
    m->grid = grid_size(width, height, cfg.tracker.detector);
    const auto cells = static_cast<std::size_t>(m->grid.width) * static_cast<std::size_t>(m->grid.height);
    const auto ucap = static_cast<std::size_t>(cap);
    m->tracks.reserve(ucap);
    m->known_ids.reserve(ucap);
    m->next_ids.reserve(ucap);
    m->known_off.reserve(ucap);
    m->next_off.reserve(ucap);
    m->track_known.assign(ucap, -1);
    m->cell_start.assign(cells + 1, 0);
    m->next_cursor.assign(cells, 0);
    m->cell_items.assign(ucap, 0);
    m->med_x.assign(ucap, 0.0f);
    m->med_y.assign(ucap, 0.0f);
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
                                                     const std::vector<Point2f>* predictions) {
    track_async(left, right, nullptr, predictions);
    return finish();
}

void StereoTracker::track_async(HostView left, HostView right, StreamHandle stream,
                                const std::vector<Point2f>* predictions) {
    const char* where = "StereoTracker::track_async";
    Impl& m = impl("track_async");
    m.check_pair(where, left, right);
    if (m.backend == Backend::Cpu) {
        m.left.track_async(left, stream, predictions);
        if (m.right)
            m.right->track_async(right, stream);
        else
            detail::build_pyramid_into(right, m.pyramid, m.right_host, m.scratch, nullptr);
    } else if (m.right) {
        m.left.track_async(left, stream, predictions);
        m.right->track_async(right, stream);
    } else {
        m.companion = detail::PyramidCompanion{&m.right_device, right, DeviceView{}, false};
        detail::TrackerBackend& be = m.left.backend_internal();
        be.set_companion(&m.companion);
        try {
            m.left.track_async(left, stream, predictions);
        } catch (...) {
            be.set_companion(nullptr);
            throw;
        }
    }
    m.stream = stream;
    m.in_flight = true;
}

void StereoTracker::track_async(DeviceView left, DeviceView right, StreamHandle stream,
                                const std::vector<Point2f>* predictions) {
    const char* where = "StereoTracker::track_async";
    Impl& m = impl("track_async");
    m.check_pair(where, left, right);
    if (m.backend != Backend::Cuda)
        throw StateError("kestrel: StereoTracker::track_async: device frames need Backend::Cuda");
    if (m.right) {
        m.left.track_async(left, stream, predictions);
        m.right->track_async(right, stream);
    } else {
        m.companion = detail::PyramidCompanion{&m.right_device, HostView{}, right, true};
        detail::TrackerBackend& be = m.left.backend_internal();
        be.set_companion(&m.companion);
        try {
            m.left.track_async(left, stream, predictions);
        } catch (...) {
            be.set_companion(nullptr);
            throw;
        }
    }
    m.stream = stream;
    m.in_flight = true;
}

const std::vector<StereoTrack>& StereoTracker::finish() {
    Impl& m = impl("finish");
    if (!m.in_flight) throw StateError("kestrel: StereoTracker::finish: no frame in flight (call track_async first)");
    m.in_flight = false;
    const std::vector<Track>& live = m.left.finish();
    if (m.right) m.right->finish();
    const int n = static_cast<int>(live.size());
    m.stage(live);
    if (m.backend == Backend::Cpu) {
        const std::vector<HostImage>& r = m.right ? *m.right->backend_internal().host_frame_pyramid() : m.right_host;
        m.matcher->match(*m.left.backend_internal().host_frame_pyramid(), r, n);
    } else {
        const DevicePyramid& r = m.right ? *m.right->backend_internal().device_frame_pyramid() : m.right_device;
        m.matcher->match(*m.left.backend_internal().device_frame_pyramid(), r, n, m.stream);
    }
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
}

}  // namespace kestrel
