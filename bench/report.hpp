// What kestrel_bench measured, and its three outputs: the table on stdout, --json and --csv.
#pragma once
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "stats.hpp"

namespace kestrel::bench {

/// One per-frame quantity. Timings in microseconds; NaN = not measured on that frame.
struct Series {
    std::string key;    ///< short name (CSV column, JSON key)
    std::string label;  ///< what it is, for the table
    std::string group;  ///< floor | kestrel | opencv | opencv-mt | opencv-cuda | paced | count
    std::string kind;   ///< wall (steady clock) | device (CUDA events) | derived | count | latency (paced)
    std::vector<double> values;
    std::string floor_key;  ///< the series this one is divided by in "x floor" ("" = Results::floor_key for
                            ///< the kestrel group, none otherwise); a paced row names the paced floor of its rate
    int late = 0;  ///< paced rows: frames whose work began after their release (the previous one overran)
};

/// A speed-up printed as baseline median / Kestrel median.
struct Comparison {
    std::string what, kestrel_key, baseline_key;
};

struct Results {
    int frames = 0;
    std::vector<std::pair<std::string, std::string>> meta;  ///< header lines, in order
    std::vector<Series> series;
    std::vector<Comparison> comparisons;
    std::vector<int> source_index;   ///< per frame: index of the frame in the source
    std::vector<int> track_lengths;  ///< frames followed, of every track lost during the measured frames
    std::vector<int> live_ages_end;  ///< ages of the tracks still live after the last frame
    std::vector<std::string> notes;  ///< warnings and remarks, one line each
    std::string floor_key;           ///< series the Kestrel figures are divided by ("" = none)

    void meta_line(const std::string& k, const std::string& v) { meta.emplace_back(k, v); }
    /// Adds a series of `frames` NaNs (call after frames is set); returns its index.
    std::size_t add(const std::string& key, const std::string& label, const std::string& group,
                    const std::string& kind, const std::string& floor_key = "");
    /// The median of the series `s` is divided by in "x floor" (NaN when none).
    double floor_of(const Series& s) const;
    const Series* find(const std::string& key) const;
    Series* find(const std::string& key);
    void set(const std::string& key, int frame, double v);
};

void print_report(const Results& r, std::ostream& os);
/// Throw std::runtime_error when the file cannot be written.
void write_json(const Results& r, const std::string& path);
void write_csv(const Results& r, const std::string& path);

}  // namespace kestrel::bench
