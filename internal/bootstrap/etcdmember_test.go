package bootstrap

import (
	"strings"
	"testing"
)

// TestEtcdMemberRemoveScript: the names are node names and nothing else reaches the shell; the
// script runs etcdctl in the etcd container against the loopback member with kubeadm's files.
func TestEtcdMemberRemoveScript(t *testing.T) {
	for _, bad := range [][]string{nil, {"Node-1"}, {"a b"}, {"x;reboot"}, {"-rf"}} {
		if _, err := EtcdMemberRemoveScript(bad); err == nil {
			t.Errorf("names %q accepted", bad)
		}
	}
	s, err := EtcdMemberRemoveScript([]string{"izbp1z", "cp-2.example"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"for name in izbp1z cp-2.example; do", `crictl exec "$ctr" etcdctl --endpoints=https://127.0.0.1:2379`,
		"/etc/kubernetes/pki/etcd/healthcheck-client.key", `member remove "$id"`, "set -eu"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
}
