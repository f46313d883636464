#!/usr/bin/env bash
# Refuses what should never be committed: a file over 1 MiB outside a testdata directory, a
# compiled binary or other non-text file (pictures for the docs excepted), and an executable file
# that is not a script. A built program at the root (once a 9.6 MB `gen`) slips past review because
# the diff shows only "Binary files differ"; this makes CI say it instead.
#
# Reads what git tracks (the index, as git itself classifies it), so it runs the same in a clean
# clone and in a work tree, in well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."

limit=$((1024 * 1024))

# git ls-files --eol: "i/<index eol> w/<work tree eol> attr/<attributes> \t<path>"; git calls a file
# binary ("i/-text") when its first 8000 bytes hold a NUL, as `git diff` does.
binary=$(git ls-files --eol | awk -F'\t' '$1 ~ /^i\/-text/ {print $2}' | grep -v -E '\.(png|jpe?g|gif)$' || true)

# git ls-files -s: "<mode> <object> <stage>\t<path>"; cat-file gives each object's size.
listing=$(git ls-files -s | awk -F'\t' '{split($1, f, " "); print f[2] " " f[1] "\t" $2}' |
  git cat-file --batch-check='%(objectsize) %(rest)')
large=$(awk -v limit="$limit" -F'\t' '{split($1, f, " "); if (f[1] > limit && ("/" $2) !~ /\/testdata\//) print $2 " (" f[1] " bytes)"}' <<<"$listing")
executables=$(awk -F'\t' '{split($1, f, " "); if (f[2] == "100755") print $2}' <<<"$listing" |
  while IFS= read -r path; do
    [[ "$(git cat-file blob ":$path" | head -c 2)" == "#!" ]] || echo "$path"
  done)

failed=0
report() { # report <what is wrong> <the fix> <paths, one a line>
  [[ -z "$3" ]] && return 0
  while IFS= read -r path; do echo "check-repo-files: $path: $1; $2" >&2; done <<<"$3"
  failed=1
}
report "over 1 MiB outside a testdata directory" "keep it out of the repository or under testdata/" "$large"
report "a binary file" "commit its source, build it, and add the output to .gitignore" "$binary"
report "executable but not a script (no #! line)" "a built program, or a mode to drop with git update-index --chmod=-x" "$executables"
((failed == 0)) || exit 1
echo "check-repo-files: $(git ls-files | wc -l) files, none binary or over 1 MiB outside testdata"
