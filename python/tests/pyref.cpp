// kestrel_pyref: the C++ side of the Python tests' comparisons (python/tests/test_against_cpp.py). Runs the C++
// API on the test images with the default settings and writes what the Python bindings must reproduce exactly:
// the grey pixels it ran on (PGM, so that Python reads the very same frame) and the results with every float
// printed to round-trip (%.9g).
//
//   kestrel_pyref detect OUTDIR BACKEND IMAGE            OUTDIR/frame.pgm, OUTDIR/keypoints.csv
//                                                        (x,y,level,score,angle,descriptor; ORB on)
//   kestrel_pyref track OUTDIR BACKEND FRAME...          OUTDIR/frame_NNN.pgm, OUTDIR/tracks.csv, OUTDIR/lost.csv
//                                                        (frame,id,x,y,prev_x,prev_y,age,status,gain,offset,
//                                                        residual,score,level)
//   kestrel_pyref stereo OUTDIR BACKEND LEFT RIGHT ...   OUTDIR/left_NNN.pgm, right_NNN.pgm, OUTDIR/stereo.csv
//                                                        (frame, the track columns, right_x,right_y,disparity,
//                                                        depth,stereo_status; rectified_rig(458, w/2, h/2, 0.11))
// BACKEND: cpu or cuda. Exit status 0 on success, 1 on an error (said on stderr), 4 when cuda has no device.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "kestrel/device_image.hpp"
#include "kestrel/error.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/feature_tracker.hpp"
#include "kestrel/stereo_tracker.hpp"
#include "tests/support/image_io.hpp"

namespace {

void write_pgm(const std::string& path, const kestrel::HostImage& img) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot write " + path);
    std::fprintf(f, "P5\n%d %d\n255\n", img.width(), img.height());
    std::fwrite(img.data(), 1, static_cast<std::size_t>(img.width()) * img.height(), f);
    std::fclose(f);
}

std::FILE* open_csv(const std::string& path, const char* header) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw std::runtime_error("cannot write " + path);
    std::fprintf(f, "%s\n", header);
    return f;
}

void write_tracks(std::FILE* f, int frame, const std::vector<kestrel::Track>& tracks) {
    for (const kestrel::Track& t : tracks)
        std::fprintf(f, "%d,%llu,%.9g,%.9g,%.9g,%.9g,%d,%d,%.9g,%.9g,%.9g,%.9g,%d\n", frame,
                     static_cast<unsigned long long>(t.id), t.x, t.y, t.prev_x, t.prev_y, t.age,
                     static_cast<int>(t.status), t.gain, t.offset, t.residual, t.score, t.level);
}

int run(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: kestrel_pyref detect|track OUTDIR cpu|cuda IMAGE...\n");
        return 1;
    }
    const std::string mode = argv[1], out = argv[2], backend_name = argv[3];
    const kestrel::Backend backend = backend_name == "cuda" ? kestrel::Backend::Cuda : kestrel::Backend::Cpu;
    if (backend == kestrel::Backend::Cuda && !kestrel::cuda_available()) {
        std::fprintf(stderr, "kestrel_pyref: no CUDA device\n");
        return 4;
    }
    if (mode == "detect") {
        const kestrel::HostImage img = kestrel::test::load_grey(argv[4]);
        write_pgm(out + "/frame.pgm", img);
        kestrel::DetectorConfig cfg;
        cfg.orb_descriptors = true;
        kestrel::FeatureDetector det(cfg, backend);
        const std::vector<kestrel::Keypoint> kps = det.detect(img.view());
        std::FILE* f = open_csv(out + "/keypoints.csv", "x,y,level,score,angle,descriptor");
        for (std::size_t i = 0; i < kps.size(); ++i) {
            std::fprintf(f, "%.9g,%.9g,%d,%.9g,%.9g,", kps[i].x, kps[i].y, kps[i].level, kps[i].score,
                         det.host_angles()[i]);
            for (const std::uint8_t b : det.host_descriptors()[i].bytes) std::fprintf(f, "%02x", b);
            std::fprintf(f, "\n");
        }
        std::fclose(f);
        return 0;
    }
    if (mode == "track") {
        std::vector<kestrel::HostImage> frames;
        for (int i = 4; i < argc; ++i) frames.push_back(kestrel::test::load_grey(argv[i]));
        kestrel::FeatureTracker trk(frames[0].width(), frames[0].height(), kestrel::TrackerConfig{}, backend);
        const char* header = "frame,id,x,y,prev_x,prev_y,age,status,gain,offset,residual,score,level";
        std::FILE* live = open_csv(out + "/tracks.csv", header);
        std::FILE* lost = open_csv(out + "/lost.csv", header);
        for (std::size_t i = 0; i < frames.size(); ++i) {
            char name[32];
            std::snprintf(name, sizeof name, "/frame_%03zu.pgm", i);
            write_pgm(out + name, frames[i]);
            write_tracks(live, static_cast<int>(i), trk.track(frames[i].view()));
            write_tracks(lost, static_cast<int>(i), trk.lost_tracks());
        }
        std::fclose(live);
        std::fclose(lost);
        return 0;
    }
    if (mode == "stereo") {
        std::vector<kestrel::HostImage> frames;
        for (int i = 4; i < argc; ++i) frames.push_back(kestrel::test::load_grey(argv[i]));
        if (frames.size() % 2 != 0) throw std::runtime_error("stereo: give LEFT RIGHT pairs");
        const int w = frames[0].width(), h = frames[0].height();
        kestrel::StereoTracker st(w, h, kestrel::rectified_rig(458.0, w / 2.0, h / 2.0, 0.11), kestrel::StereoConfig{},
                                  backend);
        std::FILE* f = open_csv(out + "/stereo.csv",
                                "frame,id,x,y,prev_x,prev_y,age,status,gain,offset,residual,score,level,right_x,"
                                "right_y,disparity,depth,stereo_status");
        for (std::size_t i = 0; i + 1 < frames.size(); i += 2) {
            char name[32];
            std::snprintf(name, sizeof name, "/left_%03zu.pgm", i / 2);
            write_pgm(out + name, frames[i]);
            std::snprintf(name, sizeof name, "/right_%03zu.pgm", i / 2);
            write_pgm(out + name, frames[i + 1]);
            for (const kestrel::StereoTrack& s : st.track(frames[i].view(), frames[i + 1].view())) {
                const kestrel::Track& t = s.left;
                std::fprintf(f, "%d,%llu,%.9g,%.9g,%.9g,%.9g,%d,%d,%.9g,%.9g,%.9g,%.9g,%d,%.9g,%.9g,%.9g,%.9g,%d\n",
                             static_cast<int>(i / 2), static_cast<unsigned long long>(t.id), t.x, t.y, t.prev_x,
                             t.prev_y, t.age, static_cast<int>(t.status), t.gain, t.offset, t.residual, t.score,
                             t.level, s.right_x, s.right_y, s.disparity, s.depth, static_cast<int>(s.status));
            }
        }
        std::fclose(f);
        return 0;
    }
    std::fprintf(stderr, "kestrel_pyref: unknown mode '%s'\n", mode.c_str());
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kestrel_pyref: %s\n", e.what());
        return 1;
    }
}
