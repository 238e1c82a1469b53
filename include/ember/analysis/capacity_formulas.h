// Representational capacity from d_model and epsilon (docs/capacity.md, "Capacity formulas"):
// the paper's fully parameterised form (the headline), the adjusted single-constant form and the
// standard Johnson-Lindenstrauss bound, plus the class rule. Capacities can exceed any double
// (d = 8192 at eps = 0.3 gives ~10^200), so every bound is carried as a natural logarithm.
#pragma once
#include <limits>
#include <string>

namespace ember {

// Constants of the full form, fitted by the paper to its optimised packings.
struct FullFormConstants {
  double C = 0.45809143;
  double a = 1.0668005;
  double b = 1.44738666;
  double c = 0.97197234;
};
inline constexpr double kSingleConstantC = 1.293;  // adjusted single-constant form
inline constexpr double kJlC = 8.0;                // textbook Johnson-Lindenstrauss
inline constexpr double kJlRandomC = 3.029;        // JL constant fitted to random vectors

struct CapacityBound {
  double ln_k = 0.0;             // natural log of the bound on k
  bool integer_ceiling = false;  // the full form's max_k is ceil()'d; the other bounds are not
  bool defined = true;           // false when epsilon is outside (0, 1], where no formula applies
  double direct = std::numeric_limits<double>::quiet_NaN();  // the formula in its own order, when finite
  double value() const;  // the bound itself; +inf when it does not fit a double; NaN if undefined
  double log10() const;
};

// docs/capacity.md: max_k = ceil( ( d exp( (eps^2 d^c / C)^(1/b) ) )^(1/a) )
CapacityBound full_form_capacity(double d, double eps, const FullFormConstants& k = {});
// docs/capacity.md: k <= d exp(d eps^2 / C), C ~ 1.293
CapacityBound single_constant_capacity(double d, double eps, double C = kSingleConstantC);
// docs/capacity.md: k <= exp(d eps^2 / C), C = 8 (textbook) or 3.029 (fitted to random vectors)
CapacityBound jl_capacity(double d, double eps, double C = kJlC);

// The inverses: the epsilon at which k vectors fit in d dimensions. For k <= d the vectors can
// be exactly orthogonal, so epsilon is 0 (the same convention as the paper's fit).
// docs/capacity.md: eps(k, d) = sqrt( C ln(k^a / d)^b / d^c )
double full_form_epsilon(double k, double d, const FullFormConstants& c = {});
// eps(k, d) = sqrt( C ln(k / d) / d )
double single_constant_epsilon(double k, double d, double C = kSingleConstantC);
// eps(k, d) = sqrt( C ln(k) / d )
double jl_epsilon(double k, double d, double C = kJlC);

// docs/capacity.md class rule: eps < 0.1 -> class 2 (near-orthogonal, superposition, finite
// capacity); eps > 0.2 -> class 1; otherwise indeterminate.
enum class CapacityClass { near_orthogonal, class1, indeterminate };
CapacityClass capacity_class(double eps);
std::string class_label(CapacityClass c);        // "2", "1", "indeterminate"
std::string class_description(CapacityClass c);  // one line for humans

// Everything docs/capacity.md reports for one (d, eps): the class and all bounds, labelled. A
// degenerate epsilon (outside (0, 1], e.g. mu + 2 sigma > 1 for nearly parallel rows) still has
// a class (eps > 0.2: class 1) but its bounds are undefined ("n/a"), never an error.
struct CapacityBounds {
  double d = 0.0, eps = 0.0;
  CapacityClass cls = CapacityClass::indeterminate;
  FullFormConstants constants;
  CapacityBound full;       // the headline
  CapacityBound single;     // C = kSingleConstantC
  CapacityBound jl;         // C = kJlC
  CapacityBound jl_random;  // C = kJlRandomC
};
CapacityBounds capacity_bounds(double d, double eps, const FullFormConstants& constants = {});

// A bound for humans: 3 significant digits ("3.99e+07", "8.42"), "10^412.3" beyond doubles, or
// "n/a" when undefined.
std::string format_capacity(const CapacityBound& b);

}  // namespace ember
