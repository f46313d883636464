// Package kubeadmcheck holds one test: the kubeadm configuration documents internal/bootstrap
// renders (copied to testdata by its TestKubeadmTestdataCurrent, which fails when they go stale)
// decode strictly into kubeadm's own v1beta4 types, so a field kubeadm does not know, or one of
// the wrong shape, fails here rather than on a booting node.
package kubeadmcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4"
	"sigs.k8s.io/yaml"
)

func TestRenderedKubeadmConfigDecodesStrictly(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata (%v): run UPDATE_KUBEADM_TESTDATA=1 go test ./internal/bootstrap -run TestKubeadmTestdataCurrent at the repository root", err)
	}
	kinds := map[string]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range strings.Split(string(b), "---\n") {
			var meta struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			want := v1beta4.SchemeGroupVersion.String()
			if meta.Kind == "KubeletConfiguration" {
				want = kubeletv1beta1.SchemeGroupVersion.String()
			}
			if meta.APIVersion != want {
				t.Fatalf("%s document %d is %s, want %s", f, i, meta.APIVersion, want)
			}
			var into any
			switch meta.Kind {
			case "KubeletConfiguration":
				// The cluster's (beside InitConfiguration) and a joining node's patch of it.
				into = &kubeletv1beta1.KubeletConfiguration{}
			case "InitConfiguration":
				into = &v1beta4.InitConfiguration{}
			case "ClusterConfiguration":
				into = &v1beta4.ClusterConfiguration{}
			case "JoinConfiguration":
				into = &v1beta4.JoinConfiguration{}
			default:
				t.Fatalf("%s document %d has kind %q", f, i, meta.Kind)
			}
			if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
				t.Errorf("%s %s: %v", f, meta.Kind, err)
			}
			kinds[meta.Kind]++
			check(t, f, into)
		}
	}
	for _, k := range []string{"InitConfiguration", "ClusterConfiguration", "JoinConfiguration", "KubeletConfiguration"} {
		if kinds[k] == 0 {
			t.Errorf("no %s among the testdata: the check would prove nothing for it", k)
		}
	}
	t.Logf("decoded %v", kinds)
}

// check looks at what kubeadm would act on, beyond the shape.
func check(t *testing.T, f string, obj any) {
	t.Helper()
	switch c := obj.(type) {
	case *v1beta4.JoinConfiguration:
		bt := c.Discovery.BootstrapToken
		if bt == nil || len(bt.CACertHashes) != 1 || bt.UnsafeSkipCAVerification {
			t.Errorf("%s: a join must pin the CA hash: %+v", f, bt)
		}
	case *v1beta4.InitConfiguration:
		if len(c.BootstrapTokens) != 1 || c.BootstrapTokens[0].Token == nil {
			t.Errorf("%s: InitConfiguration has no bootstrap token", f)
		}
	case *kubeletv1beta1.KubeletConfiguration:
		if !c.RotateCertificates || c.ShutdownGracePeriod.Duration <= c.ShutdownGracePeriodCriticalPods.Duration || c.ShutdownGracePeriodCriticalPods.Duration <= 0 {
			t.Errorf("%s: KubeletConfiguration must rotate client certificates and give regular and critical pods a shutdown grace period: %+v", f, c)
		}
	case *v1beta4.ClusterConfiguration:
		if c.ControlPlaneEndpoint == "" || c.Networking.PodSubnet == "" || c.Etcd.Local == nil {
			t.Errorf("%s: ClusterConfiguration lacks the endpoint, the pod subnet or stacked etcd: %+v", f, c)
		}
	}
}
