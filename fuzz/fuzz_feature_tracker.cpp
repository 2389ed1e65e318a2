// libFuzzer target: FeatureTracker with Backend::Cpu (the CPU reference of detect + track) over a few
// frames of a moving textured scene (7..128 px per side), with arbitrary TrackerConfig fields and,
// between good frames, bad calls: predictions of the wrong count or not finite, frames of another
// size, null frames, finish() with nothing in flight, calls on a moved-from tracker. Checked:
//   - a bad call throws InvalidArgument naming its parameter (StateError for state misuse) and changes
//     nothing: tracker A (all calls) always equals tracker B (the good calls only), bit for bit;
//   - bookkeeping: live tracks <= target_features, all Tracked, finite and inside the frame; ids unique
//     and never reused; a surviving track has age + 1 and prev = its last position; every track of the
//     previous frame is either live or in lost_tracks() (with a non-Tracked status); frame_count counts.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "fuzz_input.hpp"
#include "kestrel/feature_tracker.hpp"

using namespace kestrel;

namespace {

bool same(const std::vector<Track>& a, const std::vector<Track>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const Track &p = a[i], &q = b[i];
        const float fp[8] = {p.x, p.y, p.prev_x, p.prev_y, p.gain, p.offset, p.residual, p.score};
        const float fq[8] = {q.x, q.y, q.prev_x, q.prev_y, q.gain, q.offset, q.residual, q.score};
        if (p.id != q.id || p.age != q.age || p.status != q.status || p.level != q.level ||
            std::memcmp(fp, fq, sizeof fp) != 0)
            return false;
    }
    return true;
}

template <typename F>
void expect_invalid(F&& f) {
    try {
        f();
    } catch (const InvalidArgument& e) {
        fuzz::check_message(e);
        return;
    }
    FUZZ_CHECK(!"bad call accepted");
}

template <typename F>
void expect_state(F&& f) {
    try {
        f();
    } catch (const StateError&) {
        return;
    }
    FUZZ_CHECK(!"StateError expected");
}

struct Scene {
    int w, h;
    HostImage base;  // larger than the frame, so shifts stay inside
    Scene(fuzz::Input& in, int w_, int h_) : w(w_), h(h_), base(w_ + 16, h_ + 16) {
        in.fill(base.data(), base.width(), base.height(), base.pitch());
    }
    HostImage frame(int ox, int oy) const {
        HostImage f(w, h);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) f.at(x, y) = base.at(x + ox, y + oy);
        return f;
    }
};

// Invariants of one good frame; `before` = live tracks before it, `max_id` = largest id ever issued.
void check_frame(const FeatureTracker& t, const std::vector<Track>& before, std::uint64_t& max_id) {
    const std::vector<Track>& live = t.tracks();
    const std::vector<Track>& lost = t.lost_tracks();
    const TrackerConfig& c = t.config();
    FUZZ_CHECK(static_cast<int>(live.size()) <= c.target_features);
    std::map<std::uint64_t, const Track*> old;
    for (const Track& k : before) old[k.id] = &k;
    std::map<std::uint64_t, int> seen;
    std::uint64_t new_max = max_id;
    for (const Track& k : live) {
        FUZZ_CHECK(++seen[k.id] == 1);
        FUZZ_CHECK(k.status == TrackStatus::Tracked);
        FUZZ_CHECK(std::isfinite(k.x) && std::isfinite(k.y) && std::isfinite(k.gain) && std::isfinite(k.offset));
        FUZZ_CHECK(k.x >= 0.0f && k.y >= 0.0f && k.x <= static_cast<float>(t.width() - 1) &&
                   k.y <= static_cast<float>(t.height() - 1));
        const auto it = old.find(k.id);
        if (it != old.end()) {
            FUZZ_CHECK(k.age == it->second->age + 1);
            FUZZ_CHECK(k.prev_x == it->second->x && k.prev_y == it->second->y);
        } else {  // born this frame
            FUZZ_CHECK(k.id > max_id);
            FUZZ_CHECK(k.age == 0 && k.prev_x == k.x && k.prev_y == k.y);
            new_max = std::max(new_max, k.id);
        }
    }
    for (const Track& k : lost) {
        FUZZ_CHECK(old.count(k.id) == 1 && seen.count(k.id) == 0);
        FUZZ_CHECK(k.status != TrackStatus::Tracked);
        if (!c.forward_backward) FUZZ_CHECK(k.status != TrackStatus::LostForwardBackward);
        ++seen[k.id];
    }
    for (const Track& k : before) FUZZ_CHECK(seen.count(k.id) == 1);
    max_id = new_max;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::Input in(data, size);
    TrackerConfig c;
    c.lk.pyramid.levels = in.param(1, 3);
    c.lk.mode = static_cast<LkMode>(in.param(0, 3));
    c.lk.template_source = static_cast<TemplateSource>(in.param(0, 1));
    c.lk.patch_size = in.param(4, 16);
    c.lk.coarse_patch_size = in.param(4, 16);
    c.lk.coarse_from_level = in.param(1, 8);
    c.lk.max_iterations = in.range(1, 30);
    c.lk.min_update = in.fparam(0.0f, 1.0f);
    c.lk.max_residual = in.fparam(0.0f, 255.0f);
    c.lk.min_eigenvalue = in.flag() ? 1.0f : in.fparam(0.0f, 100.0f);
    c.detector.pyramid.levels = in.param(1, 3);
    c.detector.fast.threshold = in.param(0, 254);
    c.detector.fast.arc_min = in.range(9, 12);
    c.detector.cell_width = 32 * in.range(1, 4);
    c.detector.cell_height = in.range(8, 64);
    c.detector.per_cell = in.range(1, 4);
    c.detector.border = in.range(0, 8);
    c.target_features = in.param(1, 256);
    c.redetect_fraction = in.fparam(0.0f, 1.0f);
    c.forward_backward = in.flag();
    c.fb_max_error = in.fparam(0.0f, 100.0f);
    const int w = in.range(7, 128), h = in.range(7, 128);
    const int frames = in.range(1, 5);
    std::vector<std::uint8_t> ops(static_cast<std::size_t>(frames));
    std::vector<int> dx(ops.size()), dy(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
        ops[i] = in.byte();
        dx[i] = in.range(0, 16);
        dy[i] = in.range(0, 16);
    }
    const Scene scene(in, w, h);

    std::unique_ptr<FeatureTracker> a, b;
    try {
        a = std::make_unique<FeatureTracker>(w, h, c, Backend::Cpu);
    } catch (const InvalidArgument& e) {
        fuzz::check_message(e);
        return 0;
    }
    b = std::make_unique<FeatureTracker>(w, h, c, Backend::Cpu);
    std::uint64_t max_id = 0;
    for (std::size_t f = 0; f < ops.size(); ++f) {
        const HostImage img = scene.frame(dx[f], dy[f]);
        const std::uint8_t op = ops[f];
        const std::size_t n = a->tracks().size();
        // Bad call first (on A only), then the good frame on both.
        switch (op % 8) {
            case 1: {
                std::vector<Point2f> p(n + 1);
                expect_invalid([&] { a->track(img.view(), &p); });
                break;
            }
            case 2:
                if (n > 0) {
                    std::vector<Point2f> p(n);
                    for (std::size_t i = 0; i < n; ++i) p[i] = {a->tracks()[i].x, a->tracks()[i].y};
                    p[op / 8 % n].y = (op & 0x80) ? std::numeric_limits<float>::infinity()
                                                  : std::numeric_limits<float>::quiet_NaN();
                    expect_invalid([&] { a->track(img.view(), &p); });
                }
                break;
            case 3: {
                const HostImage other(w + 1, h);
                expect_invalid([&] { a->track(other.view()); });
                break;
            }
            case 4:
                expect_invalid([&] { a->track(HostView{nullptr, w, h, static_cast<std::size_t>(w)}); });
                break;
            case 5:
                expect_state([&] { a->finish(); });
                break;
            case 6: {  // moved-from: calls throw StateError; moving back restores it
                FeatureTracker moved(std::move(*a));
                expect_state([&] { a->track(img.view()); });
                expect_state([&] { (void)a->tracks(); });
                *a = std::move(moved);
                break;
            }
            default: break;
        }
        const std::vector<Track> before = a->tracks();
        const std::int64_t count = a->frame_count();
        if (op & 0x40) {  // predictions: the tracks' own positions (allowed, finite)
            std::vector<Point2f> p;
            for (const Track& k : before) p.push_back({k.x + 0.5f, k.y - 0.25f});
            a->track(img.view(), &p);
            b->track(img.view(), &p);
        } else {
            a->track_async(img.view(), nullptr);
            a->finish();
            b->track(img.view());
        }
        FUZZ_CHECK(a->frame_count() == count + 1);
        FUZZ_CHECK(same(a->tracks(), b->tracks()));
        FUZZ_CHECK(same(a->lost_tracks(), b->lost_tracks()));
        check_frame(*a, before, max_id);
        if ((op & 0x38) == 0x38) {  // reset: both forget, ids keep increasing
            a->reset();
            b->reset();
            FUZZ_CHECK(a->tracks().empty());
        }
    }
    return 0;
}
