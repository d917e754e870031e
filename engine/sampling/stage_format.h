#pragma once
// How the stages print their parameters in SamplerChain::describe().
#include <string>

namespace infertune {

// Two decimals ("0.95", "1.10") when that is exact to 1e-6, else the shortest form that round-trips
// ("0.025"), so describe() never shows a setting other than the one in use.
std::string format_param(float value);

}  // namespace infertune
