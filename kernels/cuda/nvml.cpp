// NVML through dlopen: the library is the driver's, so a build never links it and a host without it runs
// the same binary. The few NVML types used are declared here instead of including <nvml.h>, which the CUDA
// toolkit ships only in some packagings (and a CPU-only build has no toolkit at all); they are NVML's
// stable C ABI (nvml.h, API version 12: these structs and enum values have not changed since NVML 2).
#include "kernels/cuda/nvml.h"

#include <dlfcn.h>

#include <mutex>
#include <vector>

#include "kernels/cuda/cuda_devices.h"

namespace infertune::nvml {
namespace {

// --- The slice of nvml.h this file uses. ---
using nvmlReturn_t = int;  // an enum in nvml.h; NVML_SUCCESS is 0
constexpr nvmlReturn_t NVML_SUCCESS = 0;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlUtilization_t {
  unsigned int gpu;     // percent of the last sample period in which a kernel ran
  unsigned int memory;  // percent of it in which device memory was read or written
};
struct nvmlMemory_t {  // nvmlDeviceGetMemoryInfo (v1)
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
using nvmlClockType_t = int;  // enum nvmlClockType_enum
constexpr nvmlClockType_t NVML_CLOCK_SM = 1;
constexpr nvmlClockType_t NVML_CLOCK_MEM = 2;
constexpr unsigned kNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE

struct Library {
  void* handle = nullptr;
  std::string unavailable;  // why not, "" when usable
  nvmlReturn_t (*init)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*get_count)(unsigned*) = nullptr;
  nvmlReturn_t (*handle_by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*handle_by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*get_name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*get_utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*get_memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*get_clock)(nvmlDevice_t, nvmlClockType_t, unsigned*) = nullptr;
  nvmlReturn_t (*get_max_clock)(nvmlDevice_t, nvmlClockType_t, unsigned*) = nullptr;
  nvmlReturn_t (*get_bus_width)(nvmlDevice_t, unsigned*) = nullptr;

  // CUDA index -> NVML handle, resolved once per device (the PCI lookup asks the CUDA runtime).
  std::mutex handles_mutex;
  std::vector<std::optional<nvmlDevice_t>> handles;
  std::optional<std::vector<CudaDevice>> cuda;
};

template <class F>
bool bind(Library& lib, F& fn, const char* symbol) {
  fn = reinterpret_cast<F>(dlsym(lib.handle, symbol));
  if (!fn && lib.unavailable.empty()) lib.unavailable = std::string("libnvidia-ml.so.1 lacks ") + symbol;
  return fn != nullptr;
}

// Opens and initialises NVML. The library stays loaded (and NVML initialised) for the life of the process:
// nvmlShutdown at exit would race the sampler threads of a process being torn down, and costs nothing to skip.
void load(Library& lib) {
  lib.handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) {
    lib.unavailable = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
    return;
  }
  bool ok = bind(lib, lib.init, "nvmlInit_v2");
  ok &= bind(lib, lib.error_string, "nvmlErrorString");
  ok &= bind(lib, lib.get_count, "nvmlDeviceGetCount_v2");
  ok &= bind(lib, lib.handle_by_index, "nvmlDeviceGetHandleByIndex_v2");
  ok &= bind(lib, lib.handle_by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
  ok &= bind(lib, lib.get_name, "nvmlDeviceGetName");
  ok &= bind(lib, lib.get_utilization, "nvmlDeviceGetUtilizationRates");
  ok &= bind(lib, lib.get_memory, "nvmlDeviceGetMemoryInfo");
  ok &= bind(lib, lib.get_clock, "nvmlDeviceGetClockInfo");
  ok &= bind(lib, lib.get_max_clock, "nvmlDeviceGetMaxClockInfo");
  ok &= bind(lib, lib.get_bus_width, "nvmlDeviceGetMemoryBusWidth");
  if (!ok) return;
  if (const nvmlReturn_t r = lib.init(); r != NVML_SUCCESS) {
    lib.unavailable = std::string("nvmlInit_v2: ") + (lib.error_string(r) ? lib.error_string(r) : "failed");
  }
}

Library& library() {
  static Library lib;
  static std::once_flag once;
  std::call_once(once, [] { load(lib); });
  return lib;
}

std::optional<nvmlDevice_t> resolve_handle(Library& lib, int cuda_device) {
  if (!lib.cuda) lib.cuda = cuda_devices();
  for (const CudaDevice& d : *lib.cuda) {
    if (d.index != cuda_device || d.pci_bus_id.empty()) continue;
    nvmlDevice_t device = nullptr;
    if (lib.handle_by_pci_bus_id(d.pci_bus_id.c_str(), &device) == NVML_SUCCESS) return device;
    return std::nullopt;  // the runtime's device is not one NVML manages
  }
  // No PCI bus id (a CPU-only build asks NVML anyway): assume NVML's order is CUDA's (see nvml.h).
  unsigned count = 0;
  if (lib.get_count(&count) != NVML_SUCCESS || static_cast<unsigned>(cuda_device) >= count) return std::nullopt;
  nvmlDevice_t device = nullptr;
  if (lib.handle_by_index(static_cast<unsigned>(cuda_device), &device) != NVML_SUCCESS) return std::nullopt;
  return device;
}

// The NVML device of a CUDA index, or null when NVML is unusable or does not know it.
Library* device_library(int cuda_device, nvmlDevice_t* device) {
  Library& lib = library();
  if (!lib.unavailable.empty() || cuda_device < 0) return nullptr;
  std::lock_guard lock(lib.handles_mutex);
  const auto index = static_cast<size_t>(cuda_device);
  if (lib.handles.size() <= index) lib.handles.resize(index + 1);
  if (!lib.handles[index]) lib.handles[index] = resolve_handle(lib, cuda_device).value_or(nullptr);
  *device = *lib.handles[index];
  return *device ? &lib : nullptr;
}

}  // namespace

double theoretical_bandwidth_gbps(uint32_t memory_clock_mhz, uint32_t bus_width_bits) {
  return 2.0 * double(memory_clock_mhz) * 1e6 * double(bus_width_bits) / 8.0 / 1e9;
}

std::optional<GpuSample> nvml_sample(int cuda_device) {
  nvmlDevice_t device = nullptr;
  Library* lib = device_library(cuda_device, &device);
  if (!lib) return std::nullopt;
  nvmlUtilization_t utilization{};
  nvmlMemory_t memory{};
  unsigned memory_clock = 0, sm_clock = 0;
  if (lib->get_utilization(device, &utilization) != NVML_SUCCESS) return std::nullopt;
  if (lib->get_memory(device, &memory) != NVML_SUCCESS) return std::nullopt;
  // Clocks are optional on some boards (they report NVML_ERROR_NOT_SUPPORTED): 0 then.
  if (lib->get_clock(device, NVML_CLOCK_MEM, &memory_clock) != NVML_SUCCESS) memory_clock = 0;
  if (lib->get_clock(device, NVML_CLOCK_SM, &sm_clock) != NVML_SUCCESS) sm_clock = 0;
  return GpuSample{.busy_percent = double(utilization.gpu),
                   .memory_used_bytes = memory.used,
                   .memory_total_bytes = memory.total,
                   .memory_clock_mhz = memory_clock,
                   .sm_clock_mhz = sm_clock};
}

std::optional<GpuStatic> nvml_static(int cuda_device) {
  nvmlDevice_t device = nullptr;
  Library* lib = device_library(cuda_device, &device);
  if (!lib) return std::nullopt;
  char name[kNameBufferSize] = {};
  unsigned max_memory_clock = 0, bus_width = 0;
  if (lib->get_name(device, name, sizeof name) != NVML_SUCCESS) name[0] = '\0';
  if (lib->get_max_clock(device, NVML_CLOCK_MEM, &max_memory_clock) != NVML_SUCCESS || max_memory_clock == 0) {
    return std::nullopt;
  }
  if (lib->get_bus_width(device, &bus_width) != NVML_SUCCESS || bus_width == 0) return std::nullopt;
  return GpuStatic{.name = name,
                   .max_memory_clock_mhz = max_memory_clock,
                   .bus_width_bits = bus_width,
                   .theoretical_bandwidth_gbps = theoretical_bandwidth_gbps(max_memory_clock, bus_width)};
}

bool nvml_available() { return library().unavailable.empty(); }

std::string nvml_unavailable_reason() { return library().unavailable; }

}  // namespace infertune::nvml
