// HTML -> plain text for corpora shipped as HTML (the Debian handbook): drops tags and the
// contents of <script>, <style> and <head>, decodes common entities, and turns block elements
// (p, div, li, headings, table cells, ...) into paragraph breaks.
#pragma once
#include <string>

namespace ember {

std::string html_to_text(const std::string& html);

}  // namespace ember
