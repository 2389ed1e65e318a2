// Writes stereo test input for the examples' ctest: a textured plane seen by a moving stereo rig, rendered
// with exact geometry (tests/support/stereo_scenes.hpp), so that the matches have a known truth.
//   make_stereo euroc DST CAM0_YAML CAM1_YAML [FRAMES] [BREAK]
//       DST/mav0/cam{0,1}/data.csv + data/<ns>.png + sensor.yaml (copied): the cameras, distortions and
//       extrinsics of the two sensor.yaml files (EuRoC's cam0 and cam1), frames at 20 Hz from EuRoC MH_01's
//       first timestamp. BREAK: cam1_missing (cam1's data.csv lacks frame 3), cam0_missing (cam0's lacks frame 2).
//   make_stereo rectified DST [FRAMES] [right_missing]
//       DST/left/frame_NNN.png and DST/right/frame_NNN.png, 640x480: a rectified rig (focal 576, principal point
//       (319.5, 239.5), baseline 0.1 m) moving sideways in front of a fronto-parallel plane at a 12.37 px
//       disparity (track_sequence DST/left --right DST/right --rectified 576,319.5,239.5,0.1). right_missing:
//       the last right image is not written.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/image_io.hpp"
#include "common/sensor_yaml.hpp"
#include "stereo_scenes.hpp"

namespace fs = std::filesystem;
using kestrel::test::StereoScene;

namespace {

/// inv(A) * B for rigid 4x4 row-major transforms: R = Ra^T Rb, t = Ra^T (tb - ta).
void relative(const double* A, const double* B, std::array<double, 9>& R, std::array<double, 3>& t) {
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            double s = 0;
            for (int k = 0; k < 3; ++k) s += A[4 * k + i] * B[4 * k + j];
            R[3 * i + j] = s;
        }
        double s = 0;
        for (int k = 0; k < 3; ++k) s += A[4 * k + i] * (B[4 * k + 3] - A[4 * k + 3]);
        t[i] = s;
    }
}

std::string ns_text(int i) {  // EuRoC MH_01's first camera timestamp, then 50 ms steps
    return std::to_string(1403636579763555584LL + 50000000LL * i);
}

int euroc(const std::string& dst, const std::string& yaml0, const std::string& yaml1, int frames, const std::string& brk) {
    const kestrel_examples::SensorYaml c0 = kestrel_examples::read_sensor_yaml(yaml0);
    const kestrel_examples::SensorYaml c1 = kestrel_examples::read_sensor_yaml(yaml1);
    StereoScene s;
    s.left_cam = c0.camera;
    s.right_cam = c1.camera;
    relative(c1.T_BS, c0.T_BS, s.R_rl, s.t_rl);  // T_rl = inv(T_BS1) * T_BS0
    s.rig.type = kestrel::RigType::Raw;
    s.rig.left = s.left_cam;
    s.rig.right = s.right_cam;
    s.rig.R_rl = s.R_rl;
    s.rig.t_rl = s.t_rl;
    s.plane.origin = {{0.1, 0.05, 2.2}};
    const auto R = kestrel::test::rotation_deg(0.5, 1.0, 0.0, 15.0);
    s.plane.u = {{R[0], R[3], R[6]}};
    s.plane.v = {{R[1], R[4], R[7]}};
    s.plane.texels_per_metre = s.left_cam.fx / 2.2;
    s.plane.seed = 17;
    kestrel::test::render(s);
    const auto seq = kestrel::test::stereo_sequence(s, frames, {{0.01, 0.004, 0.02}}, 0.2);
    fs::remove_all(dst);
    for (int cam = 0; cam < 2; ++cam) {
        const fs::path dir = fs::path(dst) / "mav0" / ("cam" + std::to_string(cam));
        fs::create_directories(dir / "data");
        fs::copy_file(cam == 0 ? yaml0 : yaml1, dir / "sensor.yaml");
        std::ofstream csv(dir / "data.csv", std::ios::binary);
        csv << "#timestamp [ns],filename\r\n";
        for (int i = 0; i < frames; ++i) {
            const std::string ns = ns_text(i);
            kestrel_examples::write_png((dir / "data" / (ns + ".png")).string(), cam == 0 ? seq[i].left.view() : seq[i].right.view());
            if ((brk == "cam1_missing" && cam == 1 && i == 3) || (brk == "cam0_missing" && cam == 0 && i == 2)) continue;
            csv << ns << "," << ns << ".png\r\n";
        }
    }
    return 0;
}

int rectified(const std::string& dst, int frames, bool right_missing) {
    const StereoScene first = kestrel::test::frontal_scene(640, 480, 12.37, 23, 576.0);
    const auto seq = kestrel::test::stereo_sequence(first, frames, {{0.004, 0.001, 0.0}}, 0.0);
    fs::remove_all(dst);
    for (const char* side : {"left", "right"}) fs::create_directories(fs::path(dst) / side);
    for (int i = 0; i < frames; ++i) {
        char name[32];
        std::snprintf(name, sizeof name, "frame_%03d.png", i);
        kestrel_examples::write_png((fs::path(dst) / "left" / name).string(), seq[i].left.view());
        if (!(right_missing && i + 1 == frames))
            kestrel_examples::write_png((fs::path(dst) / "right" / name).string(), seq[i].right.view());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const std::string mode = argc > 1 ? argv[1] : "";
        if (mode == "euroc" && argc >= 5)
            return euroc(argv[2], argv[3], argv[4], argc > 5 ? std::stoi(argv[5]) : 6, argc > 6 ? argv[6] : "");
        if (mode == "rectified" && argc >= 3)
            return rectified(argv[2], argc > 3 ? std::stoi(argv[3]) : 6, argc > 4 && std::string(argv[4]) == "right_missing");
        std::fprintf(stderr, "usage: make_stereo euroc DST CAM0_YAML CAM1_YAML [FRAMES] [BREAK] | rectified DST [FRAMES] [right_missing]\n");
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "make_stereo: %s\n", e.what());
        return 1;
    }
}
