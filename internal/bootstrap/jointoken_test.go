package bootstrap

import (
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// TestJoinTokenExpiresWithinADay: the token the provider configures is kubeadm init's first
// bootstrap token, and it expires within 24 hours (issue #31): it lives in Terraform state, so it
// must not open the cluster for good.
func TestJoinTokenExpiresWithinADay(t *testing.T) {
	doc, err := Render(controlPlane())
	if err != nil {
		t.Fatal(err)
	}
	main := file(t, decodeCloudConfig(t, doc), KubeadmPath).Content
	var init initConfiguration
	if err := yaml.Unmarshal([]byte(strings.Split(main, "---\n")[0]), &init); err != nil {
		t.Fatal(err)
	}
	if len(init.BootstrapTokens) != 1 || init.BootstrapTokens[0].Token != testToken {
		t.Fatalf("bootstrapTokens = %d tokens; want the configured one", len(init.BootstrapTokens))
	}
	ttl, err := time.ParseDuration(init.BootstrapTokens[0].TTL)
	if err != nil || ttl <= 0 || ttl > 24*time.Hour {
		t.Errorf("bootstrap token ttl = %q (%v); want more than 0 (0 never expires) and at most 24h", init.BootstrapTokens[0].TTL, err)
	}
}
