#!/usr/bin/env bash
# The layers of DESIGN.md depend one way: kernels <- engine <- bench <- sweeps, and reports reads the store
# (engine below it). A file may include headers of its own layer and of the layers below, never above.
# usage: layering_check.sh SOURCE_DIR
set -euo pipefail
cd "$1"
failed=0
check() {  # check LAYER FORBIDDEN...
  local layer=$1
  shift
  for forbidden in "$@"; do
    if hits=$(grep -rn --include='*.h' --include='*.cpp' --include='*.cu' "#include \"$forbidden/" "$layer" 2>/dev/null); then
      echo "FAIL: $layer/ includes $forbidden/ (layers depend one way: kernels <- engine <- bench <- sweeps):"
      echo "$hits" | head -5
      failed=$((failed + 1))
    fi
  done
}
check kernels engine bench sweeps reports
check engine bench sweeps reports
check bench sweeps reports
check reports bench sweeps
checks=4
echo "$((checks - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
