#!/usr/bin/env bash
# The layers depend one way: kernels <- engine <- bench <- sweeps <- reports (reports reads the results store
# of sweeps/store; docs/design-changes.md). A file may include headers of its own layer and of the layers
# below, never above. The one exception is sweeps/main.cpp, the dispatcher that registers every area's
# subcommands.
# usage: layering_check.sh SOURCE_DIR
set -euo pipefail
cd "$1"
failed=0
checks=0
check() {  # check LAYER FORBIDDEN...
  local layer=$1
  shift
  for forbidden in "$@"; do
    checks=$((checks + 1))
    if hits=$(grep -rn --include='*.h' --include='*.cpp' --include='*.cu' "#include \"$forbidden/" "$layer" 2>/dev/null |
      grep -v '^sweeps/main.cpp:'); then
      echo "FAIL: $layer/ includes $forbidden/ (layers depend one way; see the order in tests/layering_check.sh):"
      echo "$hits" | head -5
      failed=$((failed + 1))
    fi
  done
}
check kernels engine bench sweeps reports
check engine bench sweeps reports
check bench sweeps reports
check sweeps reports
# Inside the engine: threads and the KV cache sit below the forward pass (arch), which sits below the GPU
# offload (engine/gpu, reached from arch only through forward.h's LayerOffload), which sits below the Context,
# which sits below the settings table (engine/settings: flags, make_context). No cycle between them.
check engine/threading engine/kv engine/arch engine/gpu engine/context engine/settings
check engine/kv engine/arch engine/gpu engine/context engine/settings
check engine/arch engine/gpu engine/context engine/settings
check engine/gpu engine/context engine/settings
check engine/context engine/settings
# Inside the sweeps: the plan does not know the runner; the commands (sweeps/cli) sit on top.
check sweeps/spec sweeps/plan sweeps/run sweeps/cli
check sweeps/plan sweeps/run sweeps/cli
check sweeps/run sweeps/cli
echo "$((checks - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
