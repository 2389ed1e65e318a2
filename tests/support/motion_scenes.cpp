#include "motion_scenes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kestrel/camera.hpp"
#include "stereo_scenes.hpp"

namespace kestrel::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

MVec3 sub(const MVec3& a, const MVec3& b) { return {{a[0] - b[0], a[1] - b[1], a[2] - b[2]}}; }
MVec3 add(const MVec3& a, const MVec3& b) { return {{a[0] + b[0], a[1] + b[1], a[2] + b[2]}}; }
double dot(const MVec3& a, const MVec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
MVec3 cross(const MVec3& a, const MVec3& b) {
    return {{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}
MVec3 mul(const MMat3& R, const MVec3& x) {
    return {{R[0] * x[0] + R[1] * x[1] + R[2] * x[2], R[3] * x[0] + R[4] * x[1] + R[5] * x[2],
             R[6] * x[0] + R[7] * x[1] + R[8] * x[2]}};
}
MVec3 mul_t(const MMat3& R, const MVec3& x) {
    return {{R[0] * x[0] + R[3] * x[1] + R[6] * x[2], R[1] * x[0] + R[4] * x[1] + R[7] * x[2],
             R[2] * x[0] + R[5] * x[1] + R[8] * x[2]}};
}

/// The nearest surface along the ray centre + lambda * dir (world), lambda > 0: its index (-1: none), the point.
int nearest(const MotionScene& s, int k, const MVec3& centre, const MVec3& dir, MVec3* world, double* tex_a,
            double* tex_b) {
    int best = -1;
    double best_l = std::numeric_limits<double>::infinity();
    for (std::size_t r = 0; r < s.rects.size(); ++r) {
        const SceneRect& q = s.rects[r];
        const MVec3 o = add(q.origin, s.offset(q.object, k));
        const MVec3 n = cross(q.u, q.v);
        const double den = dot(n, dir);
        if (std::fabs(den) < 1e-12) continue;
        const double l = dot(n, sub(o, centre)) / den;
        if (!(l > 1e-6) || l >= best_l) continue;
        const MVec3 P{{centre[0] + l * dir[0], centre[1] + l * dir[1], centre[2] + l * dir[2]}};
        const MVec3 d = sub(P, o);
        const double a = dot(d, q.u), b = dot(d, q.v);
        if (a < 0 || a > q.size_u || b < 0 || b > q.size_v) continue;
        best = static_cast<int>(r);
        best_l = l;
        if (world) *world = P;
        if (tex_a) *tex_a = a;
        if (tex_b) *tex_b = b;
    }
    return best;
}

MVec3 ray_of(const Camera& cam, double x, double y) {
    if (cam.model == CameraModel::Pinhole) return {{(x - cam.cx) / cam.fx, (y - cam.cy) / cam.fy, 1.0}};
    const Unprojection u = unproject(cam, {x, y});
    if (u.status != UnprojectStatus::Ok) return {{kNaN, kNaN, kNaN}};
    return {{u.normalized.x, u.normalized.y, 1.0}};
}

SceneRect rect(MVec3 origin, MVec3 u, MVec3 v, double su, double sv, std::uint32_t seed, int object = 0,
               double tpm = 120.0) {
    SceneRect r;
    r.origin = origin;
    r.u = u;
    r.v = v;
    r.size_u = su;
    r.size_v = sv;
    r.seed = seed;
    r.object = object;
    r.texels_per_metre = tpm;
    return r;
}

/// The shared layout (world = frame 0's camera frame, y down, z forward).
void layout(MotionScene& s, int start1, int start2, int start3, double speed, double card) {
    const MVec3 X{{1, 0, 0}}, Y{{0, 1, 0}}, Z{{0, 0, 1}};
    s.rects.push_back(rect({{-9, -6, 9}}, X, Y, 18, 12, 11, 0, 60.0));    // back wall, 9 m
    s.rects.push_back(rect({{-4, -2.2, 5}}, X, Y, 3.4, 4.0, 12, 0, 90.0));  // left block, 5 m
    s.rects.push_back(rect({{0.9, -1.6, 3.5}}, X, Y, 1.8, 2.9, 13, 0));     // right block, 3.5 m
    s.rects.push_back(rect({{-7, 1.5, 1.0}}, X, Z, 14, 8.0, 14, 0, 80.0));  // floor, 1.5 m below
    // Cards: (velocity in m/frame, mostly across the horizontal epipolar lines of a sideways-moving camera).
    s.rects.push_back(rect({{-1.3, -0.8, 3.0}}, X, Y, 0.8 * card, 0.7 * card, 21, 1, 160.0));
    s.rects.push_back(rect({{-0.2, -0.1, 4.2}}, X, Y, 0.9 * card, 0.7 * card, 22, 2, 140.0));
    s.rects.push_back(rect({{0.8, 0.3, 2.6}}, X, Y, 0.6 * card, 0.5 * card, 23, 3, 180.0));
    s.objects.push_back({start1, {{0.0, 0.02 * speed, 0.0}}});
    s.objects.push_back({start2, {{0.012 * speed, -0.02 * speed, -0.01 * speed}}});
    s.objects.push_back({start3, {{-0.01 * speed, 0.015 * speed, 0.0}}});
}

}  // namespace

MMat3 MotionScene::R_wc(int k) const {
    const double a = yaw_deg * k * M_PI / 180.0;
    return {{std::cos(a), 0, std::sin(a), 0, 1, 0, -std::sin(a), 0, std::cos(a)}};
}
MVec3 MotionScene::centre(int k) const { return {{step[0] * k, step[1] * k, step[2] * k}}; }
MVec3 MotionScene::offset(int object, int k) const {
    if (object <= 0) return {{0, 0, 0}};
    const MovingObject& o = objects[static_cast<std::size_t>(object - 1)];
    const double m = std::max(0, k - o.start_frame + 1);  // frame start_frame is the first displaced one
    return {{o.velocity[0] * m, o.velocity[1] * m, o.velocity[2] * m}};
}

void MotionScene::relative_pose(int k, MMat3* R, MVec3* t) const {
    const MMat3 a = R_wc(k), b = R_wc(k - 1);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double v = 0;
            for (int c = 0; c < 3; ++c) v += a[3 * c + i] * b[3 * c + j];  // R_wc(k)^T R_wc(k-1)
            (*R)[static_cast<std::size_t>(3 * i + j)] = v;
        }
    *t = mul_t(a, sub(centre(k - 1), centre(k)));
}

HostImage MotionScene::render(int k) const {
    const int w = camera.width, h = camera.height;
    if (rays_.empty()) {
        // The 2x2 samples of every pixel, unprojected one image row at a time (unproject_cpu: the values of
        // unproject, without validating the camera for every sample).
        rays_.resize(static_cast<std::size_t>(w) * h * 12);
        std::vector<float> xy(static_cast<std::size_t>(w) * 8);
        std::vector<Point2d> nrm(static_cast<std::size_t>(w) * 4);
        std::vector<UnprojectStatus> st(static_cast<std::size_t>(w) * 4);
        std::size_t i = 0;
        for (int y = 0; y < h; ++y) {
            std::size_t j = 0;
            for (int x = 0; x < w; ++x)
                for (int sy = 0; sy < 2; ++sy)
                    for (int sx = 0; sx < 2; ++sx) {
                        xy[j++] = static_cast<float>(x - 0.25 + 0.5 * sx);
                        xy[j++] = static_cast<float>(y - 0.25 + 0.5 * sy);
                    }
            if (camera.model != CameraModel::Pinhole)
                unproject_cpu(camera, xy.data(), w * 4, nrm.data(), st.data());
            for (std::size_t k = 0; k < static_cast<std::size_t>(w) * 4; ++k) {
                const MVec3 r = camera.model == CameraModel::Pinhole
                                    ? ray_of(camera, xy[2 * k], xy[2 * k + 1])
                                    : (st[k] == UnprojectStatus::Ok ? MVec3{{nrm[k].x, nrm[k].y, 1.0}}
                                                                    : MVec3{{kNaN, kNaN, kNaN}});
                rays_[i++] = r[0];
                rays_[i++] = r[1];
                rays_[i++] = r[2];
            }
        }
    }
    HostImage img(w, h);
    const MMat3 R = R_wc(k);
    const MVec3 C = centre(k);
    std::size_t i = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            double sum = 0;
            for (int q = 0; q < 4; ++q, i += 3) {
                const MVec3 rc{{rays_[i], rays_[i + 1], rays_[i + 2]}};
                if (!std::isfinite(rc[0])) continue;  // no preimage: black
                double a = 0, b = 0;
                const int r = nearest(*this, k, C, mul(R, rc), nullptr, &a, &b);
                if (r < 0) continue;
                const SceneRect& s = rects[static_cast<std::size_t>(r)];
                sum += plane_texture(a * s.texels_per_metre, b * s.texels_per_metre, s.seed);
            }
            img.at(x, y) = static_cast<std::uint8_t>(std::clamp(std::lround(sum * 0.25), 0L, 255L));
        }
    return img;
}

int MotionScene::cast(int k, double x, double y, MVec3* local) const {
    const MVec3 rc = ray_of(camera, x, y);
    if (!std::isfinite(rc[0])) return -1;
    MVec3 P{};
    const int r = nearest(*this, k, centre(k), mul(R_wc(k), rc), &P, nullptr, nullptr);
    if (r >= 0 && local) *local = sub(P, offset(rects[static_cast<std::size_t>(r)].object, k));
    return r;
}

Point2d MotionScene::project_point(int k, int r, const MVec3& local) const {
    const MVec3 P = add(local, offset(rects[static_cast<std::size_t>(r)].object, k));
    const MVec3 Xc = mul_t(R_wc(k), sub(P, centre(k)));
    if (!(Xc[2] > 1e-6)) return {kNaN, kNaN};
    return project(camera, {Xc[0] / Xc[2], Xc[1] / Xc[2]});
}

MotionScene motion_scene_euroc(int frames) {
    MotionScene s;
    s.camera.model = CameraModel::PinholeRadtan;  // EuRoC cam0 (examples/data/euroc_cam0_sensor.yaml)
    s.camera.width = 752;
    s.camera.height = 480;
    s.camera.fx = 458.654;
    s.camera.fy = 457.296;
    s.camera.cx = 367.215;
    s.camera.cy = 248.375;
    s.camera.d[0] = -0.28340811;
    s.camera.d[1] = 0.07395907;
    s.camera.d[2] = 0.00019359;
    s.camera.d[3] = 1.76187114e-05;
    s.frames = frames;
    layout(s, 8, 18, 28, 1.0, 1.0);
    return s;
}

MotionScene motion_scene_small() {
    MotionScene s;
    s.camera.model = CameraModel::Pinhole;
    s.camera.width = 376;
    s.camera.height = 240;
    s.camera.fx = s.camera.fy = 229.0;
    s.camera.cx = 187.5;
    s.camera.cy = 119.5;
    s.frames = 20;
    s.step = {{0.05, 0.0, 0.02}};
    layout(s, 6, 12, 100, 2.0, 1.4);  // the third card stays still
    return s;
}

MotionScene motion_scene_small_slow() {
    MotionScene s = motion_scene_small();
    s.rects.clear();
    s.objects.clear();
    layout(s, 6, 10, 100, 0.55, 1.4);
    return s;
}

MotionScene motion_scene_slow(int frames) {
    MotionScene s = motion_scene_euroc(frames);
    s.rects.clear();
    s.objects.clear();
    layout(s, 8, 18, 28, 0.3, 1.0);  // 0.6 to 0.9 px per frame across the epipolar lines
    return s;
}

MotionScene motion_scene_epipole(int frames) {
    MotionScene s = motion_scene_euroc(frames);
    s.rects.clear();
    s.objects.clear();
    s.step = {{0.002, 0.0, 0.025}};  // forward: the epipole near the image centre, on the middle card
    s.yaw_deg = 0.1;
    layout(s, 8, 18, 28, 0.4, 1.0);
    return s;
}

MotionScene motion_scene_fast_turn(int frames) {
    MotionScene s = motion_scene_euroc(frames);
    s.step = {{0.01, 0.0, 0.005}};
    s.yaw_deg = 3.0;  // 60 degrees per second at 20 fps: about 24 px per frame
    return s;
}

// ---- labels ----

void TrackLabels::see(int k, std::uint64_t id, float x, float y) {
    auto it = info_.find(id);
    if (it == info_.end()) {
        Info in;
        in.born = k;
        in.rect = scene_->cast(k, x, y, &in.local);
        in.edge = in.rect < 0;
        for (int dy = -3; dy <= 3 && !in.edge; dy += 3)
            for (int dx = -3; dx <= 3; dx += 3)
                if (scene_->cast(k, x + dx, y + dy, nullptr) != in.rect) in.edge = true;
        in.moving = in.rect >= 0 && scene_->rects[static_cast<std::size_t>(in.rect)].object > 0;
        info_[id] = in;
        return;
    }
    Info& in = it->second;
    if (in.edge) return;
    in.checked = true;
    const Point2d p = scene_->project_point(k, in.rect, in.local);
    MVec3 l{};
    if (!std::isfinite(p.x) || scene_->cast(k, p.x, p.y, &l) != in.rect ||
        std::fabs(l[0] - in.local[0]) + std::fabs(l[1] - in.local[1]) + std::fabs(l[2] - in.local[2]) > 0.01)
        in.occluded = true;
    const int obj = scene_->rects[static_cast<std::size_t>(in.rect)].object;
    if (in.moving && in.move_start < 0) {
        const MVec3 a = scene_->offset(obj, k), b = scene_->offset(obj, k - 1);
        if (a != b) in.move_start = k;
    }
    if (in.move_start >= 0 && k == in.move_start + 3) {
        in.alive_after_3 = !in.occluded;
        in.excluded = in.occluded;
        in.error_after_3 = std::hypot(x - p.x, y - p.y);
    }
}

void TrackLabels::end(int k, const Track& t, bool outlier) {
    auto it = info_.find(t.id);
    if (it == info_.end()) return;
    Info& in = it->second;
    if (in.edge) return;
    in.checked = true;
    in.outlier = outlier;
    const int obj = scene_->rects[static_cast<std::size_t>(in.rect)].object;
    if (in.moving && in.move_start < 0 && scene_->offset(obj, k) != scene_->offset(obj, k - 1)) in.move_start = k;
    const Point2d p = scene_->project_point(k, in.rect, in.local);
    in.end_error = std::hypot(t.x - p.x, t.y - p.y);
    MVec3 l{};
    in.occluded_at_end = in.occluded || !std::isfinite(p.x) || scene_->cast(k, p.x, p.y, &l) != in.rect ||
                         std::fabs(l[0] - in.local[0]) + std::fabs(l[1] - in.local[1]) +
                                 std::fabs(l[2] - in.local[2]) > 0.01;
    in.ended = k;
    if (in.move_start >= 0 && k <= in.move_start + 3 && in.occluded_at_end) in.excluded = true;
}

void TrackLabels::update(int k, const std::vector<Track>& live, const std::vector<Track>& lost) {
    last_frame_ = k;
    for (const Track& t : lost) end(k, t, t.status == TrackStatus::Outlier);
    for (const Track& t : live) see(k, t.id, t.x, t.y);
}

void TrackLabels::update_ids(int k, const std::vector<Track>& live, const std::vector<Track>& lost_ok,
                             const std::vector<Track>& rejected) {
    last_frame_ = k;
    for (const Track& t : lost_ok) end(k, t, false);
    for (const Track& t : rejected) end(k, t, true);
    for (const Track& t : live) see(k, t.id, t.x, t.y);
}

LabelSummary TrackLabels::summary() const {
    LabelSummary s;
    const int last = last_frame_;
    for (const auto& kv : info_) {
        const Info& in = kv.second;
        if (in.edge) {
            ++s.edge_tracks;
            continue;
        }
        if (!in.moving) {
            if (!in.checked) continue;
            ++s.static_tracks;
            if (in.outlier && !in.occluded_at_end) {
                ++s.static_outliers;
                if (!(in.end_error <= 1.0)) ++s.static_outliers_drifted;
            }
            continue;
        }
        if (in.outlier) ++s.moving_outliers;
        if (in.move_start < 0 || in.born >= in.move_start || in.move_start + 3 > last || in.excluded) continue;
        ++s.moving_tracks;
        if (in.alive_after_3) {
            ++s.moving_still_tracked_after_3;
            if (!(in.error_after_3 <= 1.0)) ++s.moving_still_drifted;
        }
    }
    return s;
}

}  // namespace kestrel::test
