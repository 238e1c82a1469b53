// What every figure checks first: that this ember has PLplot, that the file's directory exists and
// that its extension names a format ember writes: .png (PLplot's pngcairo) or .svg (svgcairo).
#pragma once
#include <filesystem>

namespace ember {

bool plotting_available();  // false when ember was built without PLplot

// Throws UsageError when ember was built without PLplot, the figure's directory is missing or its
// extension is neither .png nor .svg; for commands to call before they start work (the writers call
// it again).
void check_plot_path(const std::filesystem::path& figure);

// A 1200 x 750 white page (PNG or SVG by the file's extension) with black axes and text;
// finish_figure ends it and throws Error when PLplot wrote nothing. Only with PLplot (callers check
// plotting_available).
void start_figure(const std::filesystem::path& figure);
void finish_figure(const std::filesystem::path& figure);

}  // namespace ember
