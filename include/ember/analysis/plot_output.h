// What every PNG figure checks first: that this ember has PLplot and that the file can be written.
#pragma once
#include <filesystem>

namespace ember {

bool plotting_available();  // false when ember was built without PLplot

// Throws UsageError when ember was built without PLplot or the PNG's directory is missing; for
// commands to call before they start work (the writers call it again).
void check_plot_path(const std::filesystem::path& png);

// A 1200 x 750 white PNG page (PLplot pngcairo) with black axes and text; finish_png ends it and
// throws Error when PLplot wrote nothing. Only with PLplot (callers check plotting_available).
void start_png(const std::filesystem::path& png);
void finish_png(const std::filesystem::path& png);

}  // namespace ember
