#!/usr/bin/env bash
# The README's settings table is `infertune settings`' output, byte for byte: the table between the
# settings-table markers is generated from engine/settings/settings_table.cpp.
# usage: readme_settings_check.sh INFERTUNE README.md
set -euo pipefail
binary=$1
readme=$2
expected=$("$binary" settings)
actual=$(sed -n '/^<!-- settings-table:/,/^<!-- end settings-table -->/p' "$readme" | sed '1d;$d')
if [ "$expected" != "$actual" ]; then
  echo "FAIL: the settings table in $readme differs from 'infertune settings'; regenerate it:"
  diff <(echo "$expected") <(echo "$actual") || true
  exit 1
fi
echo "README settings table matches 'infertune settings'"
