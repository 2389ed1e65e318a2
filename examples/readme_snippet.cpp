// Track features through images given on the command line (quoted verbatim by the README).
#include <kestrel/feature_tracker.hpp>
#include <kestrel/opencv.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cstdio>
#include <memory>

int main(int argc, char** argv) {
    kestrel::TrackerConfig cfg;          // defaults: FAST + grid NMS, 3-level LK with gain/offset
    cfg.target_features = 300;           // keep about 300 live tracks
    std::unique_ptr<kestrel::FeatureTracker> tracker;
    for (int i = 1; i < argc; ++i) {
        const cv::Mat img = cv::imread(argv[i], cv::IMREAD_GRAYSCALE);
        if (!tracker)  // allocates once; the GPU when one is usable, else the CPU reference
            tracker = std::make_unique<kestrel::FeatureTracker>(img.cols, img.rows, cfg, kestrel::default_backend());
        for (const kestrel::Track& t : tracker->track(kestrel::host_view(img)))
            std::printf("%d %llu %.2f %.2f %d\n", i, (unsigned long long)t.id, t.x, t.y, t.age);
    }
}
