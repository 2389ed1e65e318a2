#include "common/imu.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "kestrel/camera.hpp"

namespace kestrel_examples {
namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open the file");
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// T_BS's 16 numbers of a sensor.yaml (the "data: [...]" list after "T_BS:", possibly over several lines).
void parse_T_BS(const std::string& text, const std::string& name, double* T) {
    const std::size_t key = text.find("T_BS:");
    if (key == std::string::npos) throw std::runtime_error(name + ": no T_BS (the sensor's pose in the body frame)");
    const std::size_t data = text.find("data:", key);
    const std::size_t open = data == std::string::npos ? data : text.find('[', data);
    const std::size_t close = open == std::string::npos ? open : text.find(']', open);
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(key), '\n'));
    if (close == std::string::npos)
        throw std::runtime_error(name + ":" + std::to_string(line) + ": T_BS needs data: [16 numbers]");
    std::stringstream items(text.substr(open + 1, close - open - 1));
    std::string item;
    int n = 0;
    while (std::getline(items, item, ',')) {
        char* end = nullptr;
        const double v = std::strtod(item.c_str(), &end);
        while (end && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t')) ++end;
        if (end == item.c_str() || (end && *end != '\0') || !std::isfinite(v) || n >= 16)
            throw std::runtime_error(name + ":" + std::to_string(line) + ": T_BS's data must be 16 finite numbers");
        T[n++] = v;
    }
    if (n != 16) throw std::runtime_error(name + ":" + std::to_string(line) + ": T_BS's data must be 16 finite numbers");
}

void exp_so3(const double* w, double dt, double* R) {
    const double v[3] = {w[0] * dt, w[1] * dt, w[2] * dt};
    const double th = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    const double a = th < 1e-8 ? 1.0 - th * th / 6.0 : std::sin(th) / th;
    const double b = th < 1e-8 ? 0.5 - th * th / 24.0 : (1.0 - std::cos(th)) / (th * th);
    const double K[9] = {0, -v[2], v[1], v[2], 0, -v[0], -v[1], v[0], 0};
    double K2[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) K2[3 * i + j] = K[3 * i] * K[j] + K[3 * i + 1] * K[3 + j] + K[3 * i + 2] * K[6 + j];
    for (int i = 0; i < 9; ++i) R[i] = (i % 4 == 0 ? 1.0 : 0.0) + a * K[i] + b * K2[i];
}

void mul(const double* A, const double* B, double* C) {
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

}  // namespace

std::vector<ImuSample> parse_imu_csv(const std::string& text, const std::string& name) {
    std::vector<ImuSample> out;
    std::istringstream in(text);
    std::string line;
    int no = 0;
    while (std::getline(in, line)) {
        ++no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        std::stringstream ss(line);
        std::string item;
        std::vector<std::string> cols;
        while (std::getline(ss, item, ',')) cols.push_back(item);
        const std::string at = name + ":" + std::to_string(no) + ": ";
        if (cols.size() != 7)
            throw std::runtime_error(at + "expected 7 columns (timestamp [ns], w_x, w_y, w_z, a_x, a_y, a_z), got " +
                                     std::to_string(cols.size()));
        ImuSample s;
        char* end = nullptr;
        s.t_ns = std::strtoll(cols[0].c_str(), &end, 10);
        if (end == cols[0].c_str() || *end != '\0' || s.t_ns < 0)
            throw std::runtime_error(at + "timestamp '" + cols[0] + "' is not a non-negative integer (ns)");
        for (int c = 1; c < 7; ++c) {
            const double v = std::strtod(cols[static_cast<std::size_t>(c)].c_str(), &end);
            if (end == cols[static_cast<std::size_t>(c)].c_str() || *end != '\0' || !std::isfinite(v))
                throw std::runtime_error(at + "column " + std::to_string(c + 1) + " '" + cols[static_cast<std::size_t>(c)] +
                                         "' is not a finite number");
            if (c <= 3) s.w[c - 1] = v;
        }
        if (!out.empty() && s.t_ns <= out.back().t_ns)
            throw std::runtime_error(at + "timestamp " + cols[0] + " does not increase (the line before: " +
                                     std::to_string(out.back().t_ns) + ")");
        out.push_back(s);
    }
    if (out.size() < 2) throw std::runtime_error(name + ": fewer than 2 IMU samples");
    return out;
}

Gyro read_euroc_gyro(const std::string& mav0, const double* T_BS_camera) {
    namespace fs = std::filesystem;
    Gyro g;
    g.csv = (fs::path(mav0) / "imu0" / "data.csv").string();
    if (!fs::exists(g.csv))
        throw std::runtime_error("--gyro needs the IMU: " + g.csv + " does not exist");
    g.samples = parse_imu_csv(read_text(g.csv), g.csv);
    double T_bi[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    const std::string yaml = (fs::path(mav0) / "imu0" / "sensor.yaml").string();
    if (fs::exists(yaml)) parse_T_BS(read_text(yaml), yaml, T_bi);
    // R_ci = R_cb R_bi = R_bc^T R_bi (the rotation blocks of the two T_BS).
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double s = 0.0;
            for (int k = 0; k < 3; ++k) s += T_BS_camera[4 * k + i] * T_bi[4 * k + j];
            g.R_ci[3 * i + j] = s;
        }
    return g;
}

bool gyro_rotation(const Gyro& g, long long t0, long long t1, std::array<double, 9>& R) {
    const std::vector<ImuSample>& s = g.samples;
    if (!(t1 > t0) || s.empty() || s.front().t_ns > t0 || s.back().t_ns < t1) return false;
    // dR: the IMU frame at t1 in the IMU frame at t0 (R_w(t1) = R_w(t0) dR), right-multiplied per piece.
    double dR[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
        const long long a = std::max(s[i].t_ns, t0), b = std::min(s[i + 1].t_ns, t1);
        if (b <= a) continue;
        if (s[i + 1].t_ns - s[i].t_ns > 50000000LL) return false;  // a gap of more than 50 ms
        const double w[3] = {0.5 * (s[i].w[0] + s[i + 1].w[0]), 0.5 * (s[i].w[1] + s[i + 1].w[1]),
                             0.5 * (s[i].w[2] + s[i + 1].w[2])};
        double E[9], P[9];
        exp_so3(w, static_cast<double>(b - a) * 1e-9, E);
        mul(dR, E, P);
        for (int k = 0; k < 9; ++k) dR[k] = P[k];
    }
    // The camera: X_t1 = R_ci dR^T R_ci^T X_t0.
    double A[9], B[9], Rci_t[9], dRt[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            Rci_t[3 * i + j] = g.R_ci[3 * j + i];
            dRt[3 * i + j] = dR[3 * j + i];
        }
    mul(g.R_ci, dRt, A);
    mul(A, Rci_t, B);
    for (int k = 0; k < 9; ++k) R[static_cast<std::size_t>(k)] = B[k];
    return true;
}

kestrel::Point2f predict_pixel(const kestrel::Camera& cam, const std::array<double, 9>& R, kestrel::Point2f px) {
    const kestrel::BearingUnprojection u = kestrel::unproject_bearing(cam, {px.x, px.y});
    if (u.status != kestrel::UnprojectStatus::Ok) return px;
    const double* b = u.bearing;
    const double q[3] = {R[0] * b[0] + R[1] * b[1] + R[2] * b[2], R[3] * b[0] + R[4] * b[1] + R[5] * b[2],
                         R[6] * b[0] + R[7] * b[1] + R[8] * b[2]};
    if (!(q[2] > 1e-6)) return px;
    const kestrel::Point2d p = kestrel::project(cam, {q[0] / q[2], q[1] / q[2]});
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) return px;
    return {static_cast<float>(p.x), static_cast<float>(p.y)};
}

}  // namespace kestrel_examples
