#include "metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kestrel_eval {

void Recorder::frame(int frame, const std::vector<Observation>& live) {
    frames_seen_ = std::max(frames_seen_, frame + 1);
    for (const Observation& o : live) {
        auto it = lives_.find(o.id);
        if (it == lives_.end()) {
            Life l;
            l.birth = l.last = frame;
            l.bx = o.x;
            l.by = o.y;
            lives_.emplace(o.id, l);
            continue;
        }
        Life& l = it->second;
        l.last = frame;
        double tx = 0, ty = 0;
        truth_(l.birth, frame, l.bx, l.by, tx, ty);
        const double e = std::hypot(static_cast<double>(o.x) - tx, static_cast<double>(o.y) - ty);
        errors_.emplace_back(frame - l.birth, static_cast<float>(e));
    }
}

double quantile(std::vector<float> v, double q) {
    if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::sort(v.begin(), v.end());
    const double pos = q * static_cast<double>(v.size() - 1);
    const auto i = static_cast<std::size_t>(std::floor(pos));
    const double f = pos - static_cast<double>(i);
    if (i + 1 >= v.size()) return v.back();
    return (1.0 - f) * v[i] + f * v[i + 1];
}

double geometric_mean(const std::vector<double>& v, double floor) {
    if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
    double s = 0;
    for (double x : v) s += std::log(std::max(x, floor));
    return std::exp(s / static_cast<double>(v.size()));
}

SequenceMetrics Recorder::finish(int frames) const {
    SequenceMetrics m;
    std::vector<float> all;
    all.reserve(errors_.size());
    long over = 0;
    for (const auto& [age, e] : errors_) {
        all.push_back(e);
        if (!(e <= 1.0f)) ++over;  // NaN counts as over
        if (static_cast<std::size_t>(age) >= m.error_by_age.size()) m.error_by_age.resize(static_cast<std::size_t>(age) + 1);
        m.error_by_age[static_cast<std::size_t>(age)].push_back(e);
    }
    m.observations = static_cast<long>(all.size());
    m.median = quantile(all, 0.5);
    m.p90 = quantile(all, 0.9);
    m.over_1px = all.empty() ? 0.0 : static_cast<double>(over) / static_cast<double>(all.size());
    m.good_per_frame = frames > 1 ? static_cast<double>(m.observations - over) / (frames - 1) : 0.0;
    double len_first = 0, len_all = 0;
    std::array<long, 3> alive{};
    for (const auto& [id, l] : lives_) {
        (void)id;
        const int len = l.last - l.birth;
        len_all += len;
        ++m.tracks;
        if (l.birth != 0) continue;
        ++m.first_tracks;
        len_first += len;
        for (std::size_t k = 0; k < kSurvivalAges.size(); ++k)
            if (len >= kSurvivalAges[k]) ++alive[k];
    }
    m.mean_length = m.first_tracks ? len_first / static_cast<double>(m.first_tracks) : 0.0;
    m.mean_length_all = m.tracks ? len_all / static_cast<double>(m.tracks) : 0.0;
    for (std::size_t k = 0; k < kSurvivalAges.size(); ++k)
        m.survival[k] = kSurvivalAges[k] > frames - 1 || m.first_tracks == 0
                            ? std::numeric_limits<double>::quiet_NaN()
                            : static_cast<double>(alive[k]) / static_cast<double>(m.first_tracks);
    return m;
}

}  // namespace kestrel_eval
