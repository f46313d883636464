# Sourced (not run) by the scripts that build a tool from the Go module proxy (build-tofu.sh,
# build-terraform.sh).

# module_copy MODULE@VERSION: downloads the module through the Go module proxy into the module
# cache and copies it into a fresh writable directory, whose path it prints. The cache's copy is
# read-only, and building inside it or `go install MODULE@VERSION` fails for modules whose go.mod
# carries replace directives, as OpenTofu's and Terraform's do. The caller removes the directory.
module_copy() {
  local src work
  src="$(go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  if [[ -z "$src" || ! -d "$src" ]]; then
    echo "could not download $1 from the Go module proxy" >&2
    return 1
  fi
  work="$(mktemp -d)"
  cp -R "$src/." "$work/"
  chmod -R u+w "$work"
  echo "$work"
}

# remove_dir DIR: removes a directory made by module_copy (chmod first: cp keeps read-only bits
# that rm -rf cannot get past on every system).
remove_dir() {
  [[ -n "${1:-}" ]] || return 0
  chmod -R u+w "$1" 2>/dev/null
  rm -rf "$1"
}
