// The table, JSON and CSV outputs of kestrel_bench (see report.hpp).
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "report.hpp"

namespace kestrel::bench {

std::size_t Results::add(const std::string& key, const std::string& label, const std::string& group,
                         const std::string& kind, const std::string& floor) {
    series.push_back(
        {key, label, group, kind, std::vector<double>(static_cast<std::size_t>(frames), kNotMeasured), floor});
    return series.size() - 1;
}

const Series* Results::find(const std::string& key) const {
    for (const Series& s : series)
        if (s.key == key) return &s;
    return nullptr;
}

Series* Results::find(const std::string& key) {
    for (Series& s : series)
        if (s.key == key) return &s;
    return nullptr;
}

void Results::set(const std::string& key, int frame, double v) {
    Series* s = find(key);
    if (!s) throw std::logic_error("bench: unknown series '" + key + "'");
    s->values.at(static_cast<std::size_t>(frame)) = v;
}

namespace {

double median_of(const Results& r, const std::string& key) {
    const Series* s = r.find(key);
    return s ? summarize(s->values).median : kNotMeasured;
}

}  // namespace

double Results::floor_of(const Series& s) const {
    const std::string& key = !s.floor_key.empty() ? s.floor_key : s.group == "kestrel" ? floor_key : std::string();
    if (key.empty() || key == s.key) return kNotMeasured;
    const double f = median_of(*this, key);
    return std::isfinite(f) && f > 0 ? f : kNotMeasured;
}

namespace {

std::string num(double v, const char* fmt = "%.1f") {
    if (!std::isfinite(v)) return "-";
    char b[32];
    std::snprintf(b, sizeof b, fmt, v);
    return b;
}

const char* group_title(const std::string& g) {
    if (g == "floor") return "The machine's floor (same run)";
    if (g == "kestrel") return "Kestrel";
    if (g == "opencv") return "OpenCV CPU, 1 thread";
    if (g == "opencv-mt") return "OpenCV CPU, multi-threaded";
    if (g == "opencv-cuda") return "OpenCV CUDA";
    return "Per-frame counts";
}

Summary int_summary(const std::vector<int>& v) {
    std::vector<double> d(v.begin(), v.end());
    return summarize(d);
}

}  // namespace

void print_report(const Results& r, std::ostream& os) {
    for (const auto& [k, v] : r.meta) os << k << ": " << v << "\n";
    char line[256];
    os << "\nPer-frame times in microseconds over " << r.frames << " measured frames "
       << "(wall = steady clock around the call and its synchronisation; device = CUDA events)\n";
    std::snprintf(line, sizeof line, "%-64s %-8s %9s %9s %9s %9s %9s %7s %8s\n", "", "kind", "median", "p10", "p90",
                  "p99", "max", "fps", "x floor");
    os << line;
    std::string group;
    for (const Series& s : r.series) {
        if (s.group == "count" || s.group == "paced") continue;
        const Summary m = summarize(s.values);
        if (m.n == 0 && s.group != "kestrel") continue;
        if (s.group != group) {
            group = s.group;
            os << group_title(group) << "\n";
        }
        const std::string label = "  " + s.label;
        const double floor = r.floor_of(s);
        const bool ratio = std::isfinite(floor) && m.n > 0;
        std::snprintf(line, sizeof line, "%-64s %-8s %9s %9s %9s %9s %9s %7s %8s%s\n", label.c_str(), s.kind.c_str(),
                      num(m.median).c_str(), num(m.p10).c_str(), num(m.p90).c_str(), num(m.p99).c_str(),
                      num(m.max).c_str(),
                      num(m.n ? 1e6 / m.median : kNotMeasured, "%.0f").c_str(),
                      ratio ? num(m.median / floor, "%.2f").c_str() : "",
                      m.n > 0 && m.n < r.frames ? (" (" + std::to_string(m.n) + " frames)").c_str() : "");
        os << line;
    }
    bool paced = false;
    for (const Series& s : r.series) {
        if (s.group != "paced") continue;
        if (!paced) {
            os << "\nPaced frames (--rate): latency in microseconds from the frame's release to its results on the "
                  "host,\none pass per row and rate, the GPU idle between frames; p99/med = p99 / median; x floor = "
                  "median / the paced\nfloor's median at the same rate\n";
            std::snprintf(line, sizeof line, "%-64s %-8s %9s %9s %9s %7s %9s %8s\n", "", "kind", "median", "p99", "max",
                          "p99/med", "late", "x floor");
            os << line;
        }
        paced = true;
        const Summary m = summarize(s.values);
        const double floor = r.floor_of(s);
        const std::string label = "  " + s.label;
        std::snprintf(line, sizeof line, "%-64s %-8s %9s %9s %9s %7s %9s %8s%s\n", label.c_str(), s.kind.c_str(),
                      num(m.median).c_str(), num(m.p99).c_str(), num(m.max).c_str(),
                      num(m.n > 0 ? m.p99 / m.median : kNotMeasured, "%.2f").c_str(), std::to_string(s.late).c_str(),
                      std::isfinite(floor) && m.n > 0 ? num(m.median / floor, "%.2f").c_str() : "",
                      m.n > 0 && m.n < r.frames ? (" (" + std::to_string(m.n) + " frames)").c_str() : "");
        os << line;
    }
    std::snprintf(line, sizeof line, "\n%-73s %9s %9s %9s %9s\n", "Per-frame counts", "median", "min", "max", "mean");
    os << line;
    for (const Series& s : r.series) {
        if (s.group != "count") continue;
        const Summary m = summarize(s.values);
        std::snprintf(line, sizeof line, "  %-71s %9s %9s %9s %9s\n", s.label.c_str(), num(m.median, "%.0f").c_str(),
                      num(m.min, "%.0f").c_str(), num(m.max, "%.0f").c_str(), num(m.mean, "%.1f").c_str());
        os << line;
    }
    const Summary tl = int_summary(r.track_lengths), la = int_summary(r.live_ages_end);
    std::snprintf(line, sizeof line, "\n%-73s %9s %9s %9s %9s\n", "Track length (frames a feature was followed)", "median",
                  "p90", "max", "mean");
    os << line;
    std::snprintf(line, sizeof line, "  %-71s %9s %9s %9s %9s\n",
                  ("tracks lost during the run (" + std::to_string(tl.n) + ")").c_str(), num(tl.median, "%.0f").c_str(),
                  num(tl.p90, "%.0f").c_str(), num(tl.max, "%.0f").c_str(), num(tl.mean, "%.1f").c_str());
    os << line;
    std::snprintf(line, sizeof line, "  %-71s %9s %9s %9s %9s\n",
                  ("tracks still live at the end (" + std::to_string(la.n) + ", age so far)").c_str(),
                  num(la.median, "%.0f").c_str(), num(la.p90, "%.0f").c_str(), num(la.max, "%.0f").c_str(),
                  num(la.mean, "%.1f").c_str());
    os << line;
    bool any = false;
    for (const Comparison& c : r.comparisons) {
        const double k = median_of(r, c.kestrel_key), b = median_of(r, c.baseline_key);
        if (!std::isfinite(k) || !std::isfinite(b)) continue;
        if (!any) {
            os << "\nSpeed-up of Kestrel over each baseline (baseline median / Kestrel median, same frames, same run)\n";
            std::snprintf(line, sizeof line, "%-73s %9s %9s %9s\n", "", "baseline", "Kestrel", "speed-up");
            os << line;
        }
        any = true;
        const Series* bs = r.find(c.baseline_key);
        const Series* ks = r.find(c.kestrel_key);
        const std::string label = "  " + c.what + " (" + ks->key + ") vs " + bs->key + " (" + bs->group + ")";
        std::snprintf(line, sizeof line, "%-73s %9.1f %9.1f %8.2fx\n", label.c_str(), b, k, b / k);
        os << line;
    }
    if (!r.notes.empty()) {
        os << "\nNotes\n";
        for (const std::string& n : r.notes) os << "  - " << n << "\n";
    }
}

void write_json(const Results& r, const std::string& path) {
    std::ofstream f(path);
    if (!f) throw std::runtime_error("cannot write --json file '" + path + "'");
    Json j(f);
    j.begin_object();
    j.value("tool", "kestrel_bench");
    j.value("frames", r.frames);
    j.value("floor_key", r.floor_key);
    j.begin_object("meta");
    for (const auto& [k, v] : r.meta) j.value(k.c_str(), v);
    j.end_object();
    j.begin_array("series");
    for (const Series& s : r.series) {
        const Summary m = summarize(s.values);
        j.begin_object();
        j.value("key", s.key).value("label", s.label).value("group", s.group).value("kind", s.kind);
        j.value("n", m.n).value("median", m.median).value("p10", m.p10).value("p90", m.p90).value("p99", m.p99);
        j.value("max", m.max).value("min", m.min).value("mean", m.mean);
        if (s.group != "count" && s.group != "paced") j.value("fps", m.n ? 1e6 / m.median : kNotMeasured);
        if (s.group == "paced") {
            j.value("late_frames", s.late);
            j.value("p99_over_median", m.n ? m.p99 / m.median : kNotMeasured);
        }
        const double floor = r.floor_of(s);
        if (std::isfinite(floor)) {
            j.value("floor_key", !s.floor_key.empty() ? s.floor_key : r.floor_key);
            j.value("x_floor", m.median / floor);
        }
        j.begin_array("per_frame");
        for (double v : s.values) j.item(v);
        j.end_array();
        j.end_object();
    }
    j.end_array();
    j.begin_array("comparisons");
    for (const Comparison& c : r.comparisons) {
        const double k = median_of(r, c.kestrel_key), b = median_of(r, c.baseline_key);
        if (!std::isfinite(k) || !std::isfinite(b)) continue;
        j.begin_object();
        j.value("what", c.what).value("kestrel", c.kestrel_key).value("baseline", c.baseline_key);
        j.value("kestrel_median_us", k).value("baseline_median_us", b).value("speedup", b / k);
        j.end_object();
    }
    j.end_array();
    const Summary tl = int_summary(r.track_lengths), la = int_summary(r.live_ages_end);
    j.begin_object("tracks");
    j.value("lost_count", tl.n).value("length_median", tl.median).value("length_p90", tl.p90);
    j.value("length_max", tl.max).value("length_mean", tl.mean);
    j.value("live_at_end", la.n).value("live_age_median", la.median).value("live_age_mean", la.mean);
    j.end_object();
    j.begin_array("source_index");
    for (int i : r.source_index) j.item(i);
    j.end_array();
    j.begin_array("notes");
    for (const std::string& n : r.notes) j.value(nullptr, n);
    j.end_array();
    j.end_object();
    if (!f) throw std::runtime_error("error writing --json file '" + path + "'");
}

void write_csv(const Results& r, const std::string& path) {
    std::ofstream f(path);
    if (!f) throw std::runtime_error("cannot write --csv file '" + path + "'");
    f << "frame,source_index";
    for (const Series& s : r.series) f << "," << s.key;
    f << "\n";
    for (int i = 0; i < r.frames; ++i) {
        f << i << "," << (i < static_cast<int>(r.source_index.size()) ? r.source_index[static_cast<std::size_t>(i)] : -1);
        for (const Series& s : r.series) {
            const double v = s.values[static_cast<std::size_t>(i)];
            f << ",";
            if (std::isfinite(v)) {
                char b[32];
                std::snprintf(b, sizeof b, s.kind == "count" ? "%.0f" : "%.3f", v);
                f << b;
            }
        }
        f << "\n";
    }
    if (!f) throw std::runtime_error("error writing --csv file '" + path + "'");
}

}  // namespace kestrel::bench
