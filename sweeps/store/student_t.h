#pragma once
// Student's t distribution, for confidence intervals of a mean from few repetitions (a normal quantile
// would claim too narrow an interval at n = 3..10).
namespace infertune {

// P(T <= t) for T with `df` degrees of freedom (df > 0).
double student_t_cdf(double t, double df);

// The t with P(T <= t) = p, for 0 < p < 1 and df > 0; e.g. student_t_quantile(0.975, 4) = 2.776.
double student_t_quantile(double p, double df);

}  // namespace infertune
