// Checks the examples' outputs for the ctest "examples" tests. Each check prints what failed and the
// tool exits 1 on the first failure. Checks apply in order; column checks apply to the last --csv.
//   --csv FILE HEADER MIN_ROWS   the header line equals HEADER, >= MIN_ROWS rows, equal field counts
//   --only COL VALUE             later column checks look only at rows whose COL equals VALUE
//   --all                        later column checks look at every row again
//   --range COL LO HI            every value of column COL is a number in [LO, HI]
//   --values COL A|B|...         every value of column COL is one of the listed words
//   --distinct COL MIN           column COL holds at least MIN distinct values
//   --ascending COL              column COL is non-decreasing (numbers)
//   --keypoints-in-corners KP CORNERS S
//                                every keypoint of detect_image's KP csv (level-0 x, y) is a corner
//                                of CORNERS (level x, y = level-0 / S^level) with the same score
//   --tracks-match A B TOL       two track CSVs (frame,timestamp,id,x,y,level,status) hold the same
//                                rows in the same order: equal frame, timestamp, id, level and status,
//                                x and y within TOL px (the CPU and GPU trackers' stated tolerance);
//                                stereo CSVs (+ right_x,right_y,disparity,depth,stereo_status): the right
//                                position and disparity within TOL px, depth within TOL relative, equal
//                                stereo status ("nan" equal to "nan" only)
//   --image FILE W H             FILE is a readable image of W x H pixels (0 = any size)
//   --nonempty FILE              FILE exists and is not empty
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/image_io.hpp"

namespace {

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "check_output: FAILED: %s\n", what.c_str());
    std::exit(1);
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    std::istringstream in(s);
    while (std::getline(in, cur, sep)) out.push_back(cur);
    if (!s.empty() && s.back() == sep) out.emplace_back();
    return out;
}

struct Csv {
    std::string path;
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows, all;
    int column(const std::string& name) const {
        for (std::size_t i = 0; i < header.size(); ++i)
            if (header[i] == name) return static_cast<int>(i);
        fail(path + ": no column '" + name + "'");
    }
};

double number(const Csv& c, std::size_t row, int col) {
    const std::string& s = c.rows[row][col];
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0')
        fail(c.path + " row " + std::to_string(row + 1) + ": '" + s + "' in column " + c.header[col] + " is not a number");
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    Csv csv;
    const auto need = [&](int i, int n) {
        if (i + n >= argc) fail(std::string(argv[i]) + " needs " + std::to_string(n) + " arguments");
    };
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--csv") {
            need(i, 3);
            csv = Csv{};
            csv.path = argv[i + 1];
            std::ifstream in(csv.path);
            if (!in) fail("cannot open " + csv.path);
            std::string line;
            if (!std::getline(in, line) || line != argv[i + 2])
                fail(csv.path + ": header '" + line + "', expected '" + argv[i + 2] + "'");
            csv.header = split(line, ',');
            while (std::getline(in, line)) {
                csv.rows.push_back(split(line, ','));
                if (csv.rows.back().size() != csv.header.size())
                    fail(csv.path + " row " + std::to_string(csv.rows.size()) + ": " +
                         std::to_string(csv.rows.back().size()) + " fields, header has " +
                         std::to_string(csv.header.size()));
            }
            const long min_rows = std::atol(argv[i + 3]);
            if (static_cast<long>(csv.rows.size()) < min_rows)
                fail(csv.path + ": " + std::to_string(csv.rows.size()) + " rows, expected at least " + argv[i + 3]);
            csv.all = csv.rows;
            std::printf("ok: %s has %zu rows\n", csv.path.c_str(), csv.rows.size());
            i += 3;
        } else if (a == "--only") {
            need(i, 2);
            const int c = csv.column(argv[i + 1]);
            csv.rows.clear();
            for (const auto& row : csv.all)
                if (row[c] == argv[i + 2]) csv.rows.push_back(row);
            if (csv.rows.empty()) fail(csv.path + ": no row with " + argv[i + 1] + " = " + argv[i + 2]);
            std::printf("(rows with %s = %s: %zu)\n", argv[i + 1], argv[i + 2], csv.rows.size());
            i += 2;
        } else if (a == "--all") {
            csv.rows = csv.all;
        } else if (a == "--range") {
            need(i, 3);
            const int c = csv.column(argv[i + 1]);
            const double lo = std::atof(argv[i + 2]), hi = std::atof(argv[i + 3]);
            for (std::size_t r = 0; r < csv.rows.size(); ++r) {
                const double v = number(csv, r, c);
                if (!(v >= lo && v <= hi))
                    fail(csv.path + " row " + std::to_string(r + 1) + ": " + argv[i + 1] + " = " + csv.rows[r][c] +
                         " outside [" + argv[i + 2] + ", " + argv[i + 3] + "]");
            }
            std::printf("ok: %s in [%s, %s]\n", argv[i + 1], argv[i + 2], argv[i + 3]);
            i += 3;
        } else if (a == "--values") {
            need(i, 2);
            const int c = csv.column(argv[i + 1]);
            const auto allowed = split(argv[i + 2], '|');
            const std::set<std::string> ok(allowed.begin(), allowed.end());
            for (std::size_t r = 0; r < csv.rows.size(); ++r)
                if (!ok.count(csv.rows[r][c]))
                    fail(csv.path + " row " + std::to_string(r + 1) + ": " + argv[i + 1] + " = '" + csv.rows[r][c] +
                         "' not in " + argv[i + 2]);
            std::printf("ok: %s in {%s}\n", argv[i + 1], argv[i + 2]);
            i += 2;
        } else if (a == "--distinct") {
            need(i, 2);
            const int c = csv.column(argv[i + 1]);
            std::set<std::string> seen;
            for (const auto& row : csv.rows) seen.insert(row[c]);
            if (static_cast<long>(seen.size()) < std::atol(argv[i + 2]))
                fail(csv.path + ": " + std::to_string(seen.size()) + " distinct " + argv[i + 1] + ", expected at least " +
                     argv[i + 2]);
            std::printf("ok: %zu distinct %s\n", seen.size(), argv[i + 1]);
            i += 2;
        } else if (a == "--ascending") {
            need(i, 1);
            const int c = csv.column(argv[i + 1]);
            for (std::size_t r = 1; r < csv.rows.size(); ++r)
                if (number(csv, r, c) < number(csv, r - 1, c))
                    fail(csv.path + " row " + std::to_string(r + 1) + ": " + argv[i + 1] + " decreases");
            std::printf("ok: %s non-decreasing\n", argv[i + 1]);
            i += 1;
        } else if (a == "--keypoints-in-corners") {
            need(i, 3);
            const auto load = [](const std::string& path) {
                std::ifstream in(path);
                if (!in) fail("cannot open " + path);
                std::vector<std::vector<std::string>> rows;
                std::string line;
                std::getline(in, line);
                while (std::getline(in, line)) rows.push_back(split(line, ','));
                return rows;
            };
            std::set<std::string> corners;
            for (const auto& r : load(argv[i + 2])) corners.insert(r.at(0) + "," + r.at(1) + "," + r.at(2) + "," + r.at(3));
            const double s = std::atof(argv[i + 3]);
            const auto kps = load(argv[i + 1]);
            for (const auto& r : kps) {
                const int level = std::atoi(r.at(2).c_str());
                const double f = std::pow(s, level);
                const long x = std::lround(std::atof(r.at(0).c_str()) / f), y = std::lround(std::atof(r.at(1).c_str()) / f);
                const std::string key = std::to_string(x) + "," + std::to_string(y) + "," + r.at(2) + "," + r.at(3);
                if (!corners.count(key)) fail("keypoint " + r.at(0) + "," + r.at(1) + " level " + r.at(2) + " score " +
                                              r.at(3) + " is not a pre-NMS corner (" + key + ")");
            }
            if (kps.empty()) fail(std::string(argv[i + 1]) + " has no keypoints");
            std::printf("ok: all %zu keypoints are pre-NMS corners with their score\n", kps.size());
            i += 3;
        } else if (a == "--tracks-match") {
            need(i, 3);
            const auto load = [](const std::string& path) {
                std::ifstream in(path);
                if (!in) fail("cannot open " + path);
                std::vector<std::vector<std::string>> rows;
                std::string line;
                while (std::getline(in, line)) rows.push_back(split(line, ','));
                return rows;
            };
            const auto ra = load(argv[i + 1]), rb = load(argv[i + 2]);
            const double tol = std::atof(argv[i + 3]);
            double worst = 0.0;
            for (std::size_t r = 0; r < std::max(ra.size(), rb.size()); ++r) {
                const std::string where = std::string(argv[i + 1]) + " / " + argv[i + 2] + " line " + std::to_string(r + 1);
                if (r >= ra.size() || r >= rb.size()) fail(where + ": one file ends here (row counts differ)");
                const auto& x = ra[r];
                const auto& y = rb[r];
                if (x.size() != y.size() || (x.size() != 7 && x.size() != 12))
                    fail(where + ": expected 7 fields (mono) or 12 (stereo) in both");
                if (r == 0) {
                    if (x != y) fail(where + ": headers differ");
                    continue;
                }
                for (int c : {0, 1, 2, 5, 6})
                    if (x[c] != y[c]) fail(where + ": column " + std::to_string(c + 1) + " '" + x[c] + "' vs '" + y[c] + "'");
                for (int c : {3, 4}) {
                    const double d = std::fabs(std::atof(x[c].c_str()) - std::atof(y[c].c_str()));
                    worst = std::max(worst, d);
                    if (!(d <= tol)) fail(where + ": " + (c == 3 ? "x" : "y") + " " + x[c] + " vs " + y[c]);
                }
                if (x.size() == 12) {
                    if (x[11] != y[11]) fail(where + ": stereo_status '" + x[11] + "' vs '" + y[11] + "'");
                    for (int c : {7, 8, 9, 10}) {
                        if (x[c] == y[c]) continue;  // nan, inf, or the same text
                        const double a = std::atof(x[c].c_str()), b = std::atof(y[c].c_str());
                        const double d = std::fabs(a - b) / (c == 10 ? std::max(1.0, std::fabs(a)) : 1.0);
                        if (!(d <= tol)) fail(where + ": column " + std::to_string(c + 1) + " " + x[c] + " vs " + y[c]);
                    }
                }
            }
            std::printf("ok: %zu track rows match (largest position difference %.2g px, tolerance %s)\n",
                        ra.size() - 1, worst, argv[i + 3]);
            i += 3;
        } else if (a == "--image") {
            need(i, 3);
            kestrel::HostImage img;
            try {
                img = kestrel_examples::load_grey(argv[i + 1]);
            } catch (const std::exception& e) {
                fail(e.what());
            }
            const int w = std::atoi(argv[i + 2]), h = std::atoi(argv[i + 3]);
            if ((w && img.width() != w) || (h && img.height() != h))
                fail(std::string(argv[i + 1]) + " is " + std::to_string(img.width()) + "x" +
                     std::to_string(img.height()) + ", expected " + argv[i + 2] + "x" + argv[i + 3]);
            std::printf("ok: %s is a %dx%d image\n", argv[i + 1], img.width(), img.height());
            i += 3;
        } else if (a == "--nonempty") {
            need(i, 1);
            std::error_code ec;
            const auto size = std::filesystem::file_size(argv[i + 1], ec);
            if (ec || size == 0) fail(std::string(argv[i + 1]) + " is missing or empty");
            std::printf("ok: %s has %ju bytes\n", argv[i + 1], static_cast<std::uintmax_t>(size));
            i += 1;
        } else {
            fail("unknown check " + a);
        }
    }
    return 0;
}
