# Sourced (not run) by demo.sh: reads the emulator node agent's GET /_emulator/nodes.

# print_modeled_times: reads /_emulator/nodes' JSON on stdin and prints one line per registered
# node: its modeled time from RunInstances to Ready (internal/emulator/nodeagent boottime.go), when
# its kubelet registers, the longest step and what dominated it, and the phases its image held;
# below it, any note that the Cluster Autoscaler would give up on the node. Needs jq.
print_modeled_times() {
  command -v jq >/dev/null 2>&1 || { echo "  jq is missing: make test-tools installs it" >&2; return 1; }
  jq -r '
    .nodes[] | select(.node) |
    ([.boot[]? | select(.held) | .phase] | join(", ")) as $held |
    ([.boot[]? | select(.held | not)] | max_by(.seconds)) as $top |
    ("  \(.node) (\(.instance_id)): " +
      (if .modeled_ready_seconds then "Ready \(.modeled_ready_seconds) s after RunInstances (\((.modeled_ready_seconds / 6 | round) / 10) min)"
       else "never Ready (\(.reason // "see /_emulator/nodes"))" end) +
      ", its kubelet registers at \(.modeled_registered_seconds // "?") s" +
      (if $top then "; longest: \($top.phase) \($top.seconds) s (\($top.dominated_by // "no detail"))" else "" end) +
      (if $held != "" then "; held by its image: \($held)" else "" end)),
    (.notes // [] | .[] | select(test("Cluster Autoscaler")) | "    note: " + .)
  '
}
