#!/usr/bin/env bash
# The layers depend one way: kernels <- engine <- bench <- sweeps <- reports (reports reads the results store
# of sweeps/store; docs/design-changes.md). A file may include headers of its own layer and of the layers
# below, never above. The one exception is sweeps/main.cpp, the dispatcher that registers every area's
# subcommands.
# usage: layering_check.sh SOURCE_DIR
set -euo pipefail
cd "$1"
failed=0
check() {  # check LAYER FORBIDDEN...
  local layer=$1
  shift
  for forbidden in "$@"; do
    if hits=$(grep -rn --include='*.h' --include='*.cpp' --include='*.cu' "#include \"$forbidden/" "$layer" 2>/dev/null |
      grep -v '^sweeps/main.cpp:'); then
      echo "FAIL: $layer/ includes $forbidden/ (layers depend one way: kernels <- engine <- bench <- sweeps <- reports):"
      echo "$hits" | head -5
      failed=$((failed + 1))
    fi
  done
}
check kernels engine bench sweeps reports
check engine bench sweeps reports
check bench sweeps reports
check sweeps reports
checks=4
echo "$((checks - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
