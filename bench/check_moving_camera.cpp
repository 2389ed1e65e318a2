// ctest kestrel_bench_moving_camera: the default input's rendering and its ground-truth motion agree, at the
// demo's scale (magnification 1) and at the bench's (2, and 3 for 1280x720). The photo is a wrapped linear ramp,
// I(X, Y) = (2 X + 3 Y) mod 256, which bilinear interpolation reproduces exactly away from the wraps; so a frame
// pixel p of frame a and its image q = map(a, b, p) in frame b show the same photo point, and render(a) at p
// equals render(b) interpolated at q up to the two renders' rounding (at most 1 grey level), wherever neither
// neighbourhood holds a wrap. The ramp changes by 2 / m grey levels per frame pixel in x and 3 / m in y (m the
// magnification), so a rendering or a mapping off by a pixel or two breaks this.
// Also: kestrel_bench's moving-camera source plays the sequence's frames, loops, and refuses too large a view.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "examples/common/synthetic.hpp"
#include "frames.hpp"

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
    if (ok) return;
    std::fprintf(stderr, "FAIL: %s\n", what.c_str());
    ++failures;
}

double bilinear(const kestrel::HostImage& img, double x, double y) {
    const int x0 = static_cast<int>(std::floor(x)), y0 = static_cast<int>(std::floor(y));
    const double fx = x - x0, fy = y - y0;
    return (1 - fy) * ((1 - fx) * img.at(x0, y0) + fx * img.at(x0 + 1, y0)) +
           fy * ((1 - fx) * img.at(x0, y0 + 1) + fx * img.at(x0 + 1, y0 + 1));
}

// Range of the values around (x, y) (radius r): large where the neighbourhood holds a wrap of the ramp.
int spread(const kestrel::HostImage& img, int x, int y, int r) {
    int lo = 255, hi = 0;
    for (int dy = -r; dy <= r + 1; ++dy)
        for (int dx = -r; dx <= r + 1; ++dx) {
            const int v = img.at(x + dx, y + dy);
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    return hi - lo;
}

void check(double magnification, int width, int height, int period) {
    kestrel::HostImage ramp(900, 700);
    for (int y = 0; y < ramp.height(); ++y)
        for (int x = 0; x < ramp.width(); ++x) ramp.at(x, y) = static_cast<std::uint8_t>((2 * x + 3 * y) % 256);
    const kestrel_examples::SyntheticSequence seq(ramp, period, width, height,
                                                  {magnification, 8.0 * magnification, 5.0 * magnification});
    const std::string tag = "magnification " + std::to_string(magnification) + ", " + std::to_string(width) + "x" +
                            std::to_string(height);
    int compared = 0;
    double worst = 0;
    for (int a = 0; a < period; a += 7) {
        const kestrel::HostImage fa = seq.render(a);
        for (int step : {1, 3, 25}) {
            const int b = (a + step) % period;
            const kestrel::HostImage fb = seq.render(b);
            for (int y = 8; y < height - 8; y += 13)
                for (int x = 8; x < width - 8; x += 17) {
                    const kestrel::Point2f q = seq.map(a, b, {static_cast<float>(x), static_cast<float>(y)});
                    if (!(q.x >= 4 && q.y >= 4 && q.x < width - 5 && q.y < height - 5)) continue;
                    const int qx = static_cast<int>(std::floor(q.x)), qy = static_cast<int>(std::floor(q.y));
                    if (spread(fa, x, y, 2) > 24 || spread(fb, qx, qy, 2) > 24) continue;  // a wrap nearby
                    const double d = std::fabs(fa.at(x, y) - bilinear(fb, q.x, q.y));
                    worst = std::max(worst, d);
                    ++compared;
                }
        }
    }
    std::printf("%s: %d pixel pairs, largest difference %.3f grey levels, largest step %.1f px\n", tag.c_str(), compared,
                worst, static_cast<double>(seq.max_step()));
    expect(compared > 1000, tag + ": too few pixel pairs compared (" + std::to_string(compared) + ")");
    expect(worst <= 1.0 + 1e-3, tag + ": render and map disagree by " + std::to_string(worst) + " grey levels");
    // The pan reaches its speed cap in x scaled by the magnification (the window's own motion; the corners move
    // more with roll and zoom), but never beyond the caps plus what roll and zoom add at the corners.
    expect(seq.max_step() > 4.0 * magnification && seq.max_step() < 16.0 * magnification,
           tag + ": largest step " + std::to_string(seq.max_step()) + " px out of range");
}

}  // namespace

int main(int argc, char** argv) {
    try {
        check(1.0, 400, 320, 200);  // the demo's geometry
        check(2.0, 752, 480, 200);  // the bench's default
        check(3.0, 1280, 720, 200);
        // kestrel_bench's source: the frames of the sequence, periodic; too large a view is refused.
        if (argc > 1) {
            kestrel::bench::MovingCamera m;
            m.photo = argv[1];
            m.period = 20;
            auto src = kestrel::bench::open_moving_camera(m, "");
            expect(src->periodic() && src->size() == 20, "the moving camera is a periodic source of 20 frames");
            const kestrel_examples::SyntheticSequence seq(kestrel::bench::load_grey(argv[1]), 20, 752, 480,
                                                          {2.0, 16.0, 10.0});
            for (int i : {0, 7, 19}) {
                const kestrel::HostImage a = src->read(i), b = seq.render(i);
                bool same = a.width() == b.width() && a.height() == b.height();
                for (int y = 0; same && y < a.height(); ++y)
                    for (int x = 0; same && x < a.width(); ++x) same = a.at(x, y) == b.at(x, y);
                expect(same, "frame " + std::to_string(i) + " of the bench's source equals the sequence's render");
            }
            kestrel::bench::Sequence played(kestrel::bench::open_moving_camera(m, ""), {}, 45);
            expect(played.distinct() == 20 && played.periodic() && played.source_index(44) == 4,
                   "45 frames of a 20-frame period loop: distinct 20, frame 44 is source frame 4");
            m.width = 2000;
            bool refused = false;
            try {
                (void)kestrel::bench::open_moving_camera(m, "");
            } catch (const std::runtime_error& e) {
                refused = std::string(e.what()).find("window larger than the photo") != std::string::npos;
            }
            expect(refused, "a 2000x480 view of a magnified 800x640 photo is refused, naming the reason");
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "FAIL: %s\n", e.what());
        return 1;
    }
    if (failures) return 1;
    std::printf("moving camera: render, map and the bench's source agree\n");
    return 0;
}
