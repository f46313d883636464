#!/usr/bin/env bash
# make test-tools: the command-line tools the unit tests hand rendered artefacts to, from Debian
# packages. `make test` runs this first, so the README's command checks the same things CI does:
#   promtool   (prometheus)              checks and unit-tests the alert rules
#   amtool     (prometheus-alertmanager) checks the Alertmanager routing example
#   cloud-init (cloud-init)              validates the node bootstrap documents, merges user data
#   python3    (python3)                 runs the reaper and all-reduce scripts; cloud-init's own
#   openssl    (openssl)                 computes the cluster CA's discovery hash independently
#   curl       (curl)                    runs the spot-interruption handler against a fake metadata server
#   jq         (jq)                      make demo-cluster reads each node's modeled time to Ready
#   shellcheck (shellcheck)              lints the bootstrap bundle's fetch script (internal/bundle)
# A test whose tool is missing fails (naming the tool and `make test-tools`); it does not skip.
#
# Installs only what is missing, so a machine that has everything does nothing and needs no network.
# The packages' services are never started: a policy-rc.d that refuses every service start is put in
# place for the install (unless one is there already) and removed afterwards.
set -euo pipefail

# tool:package pairs.
wanted=(promtool:prometheus amtool:prometheus-alertmanager cloud-init:cloud-init python3:python3 openssl:openssl curl:curl jq:jq shellcheck:shellcheck)

missing=()
for entry in "${wanted[@]}"; do
  command -v "${entry%%:*}" >/dev/null 2>&1 || missing+=("${entry#*:}")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

if [[ -n "${GPUCLUSTER_ALLOW_MISSING_TOOLS:-}" ]]; then
  echo "test-tools: not installing ${missing[*]} (GPUCLUSTER_ALLOW_MISSING_TOOLS is set): the tests that need them will be skipped" >&2
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "test-tools: missing ${missing[*]} and this is not a Debian-like system (no apt-get); install the tools by hand" >&2
  exit 1
fi

sudo=()
if [[ "$(id -u)" != 0 ]]; then
  command -v sudo >/dev/null 2>&1 || { echo "test-tools: installing ${missing[*]} needs root or sudo" >&2; exit 1; }
  sudo=(sudo)
fi

echo "test-tools: installing ${missing[*]}" >&2
policy=/usr/sbin/policy-rc.d
if [[ ! -e "$policy" ]]; then
  trap '"${sudo[@]}" rm -f "$policy"' EXIT
  printf '#!/bin/sh\n# Left by scripts/install-test-tools.sh while it installs: start no service.\nexit 101\n' |
    "${sudo[@]}" tee "$policy" >/dev/null
  "${sudo[@]}" chmod 0755 "$policy"
fi

"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"

for entry in "${wanted[@]}"; do
  command -v "${entry%%:*}" >/dev/null 2>&1 || { echo "test-tools: ${entry#*:} installed but ${entry%%:*} is not on PATH" >&2; exit 1; }
done
