# The block quantization codecs and the attention kernels' type check: what the KV cache types need.
file(GLOB QUANT_SOURCES CONFIGURE_DEPENDS RELATIVE ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/kernels/quant/*.cpp)
infertune_fuzz_library(fuzz_quant SOURCES ${QUANT_SOURCES} kernels/quant.cpp kernels/attention/attention_check.cpp
  LIBS fuzz_gguf)

# The settings table with its value checks and list/range syntax, and the --prompt-tokens list; -sm and -ts
# bring the layer split (and the offload arithmetic it sits on, built without CUDA).
infertune_fuzz_library(fuzz_settings
  SOURCES engine/settings/setting.cpp engine/settings/settings_table.cpp engine/settings/setting_flags.cpp
          engine/settings/value_lists.cpp engine/settings/command_line.cpp engine/cli/flag_ranges.cpp
          engine/cli/flag_aliases.cpp engine/run/token_list.cpp
          engine/threading/topology.cpp engine/threading/cpu_set.cpp engine/threading/placement_options.cpp
          engine/context/flash_attention.cpp engine/kv/kv_storage.cpp
          engine/gpu/layer_split.cpp engine/gpu/gpu_memory.cpp kernels/cuda/cuda_devices_none.cpp
  LIBS fuzz_quant fmt::fmt CLI11::CLI11 PkgConfig::HWLOC)
