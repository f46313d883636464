package clustertest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// bundleKeyRE is a bundle's object key as a stub names it (upload.KeyFor).
var bundleKeyRE = regexp.MustCompile(`/[0-9a-f]{64}\.tar\.gz`)

// checkBootedFromBundles: every node the agent registered has, as ECS holds it (DescribeUserData
// through the provider's client), a user data that is the bundle stub alone: at most
// bundle.MaxStubBytes, naming one bundle, with no PEM block and no kubeadm configuration. The
// agent registers a stub's node only once it fetched the bundle as the instance's RAM role, so
// with the cluster formed (checkClusterWorks), every node booted from its bundle.
func (s *stack) checkBootedFromBundles(t *testing.T) {
	t.Helper()
	c, err := cloud.New(t.Context(), cloud.Config{Region: acctest.Region, Endpoint: s.emu.URL, MaxRetries: 3, UserAgent: "clustertest/0",
		Credentials: cloud.Credentials{AccessKeyID: acctest.AccessKey, AccessKeySecret: acctest.SecretKey}})
	if err != nil {
		t.Fatal(err)
	}
	nodes := 0
	for _, st := range s.agent.Statuses() {
		if st.Node == "" {
			continue
		}
		nodes++
		raw, err := c.UserData(t.Context(), st.InstanceID)
		if err != nil {
			t.Fatalf("DescribeUserData %s: %v", st.InstanceID, err)
		}
		doc, err := bootstrap.UnpackUserData(raw)
		if err != nil {
			t.Fatalf("the user data of %s: %v", st.InstanceID, err)
		}
		switch {
		case len(doc) > bundle.MaxStubBytes:
			t.Errorf("node %s (%s): user data of %d bytes, want the stub alone (at most %d)", st.Node, st.InstanceID, len(doc), bundle.MaxStubBytes)
		case !strings.Contains(doc, bundle.FetchScriptPath) || len(bundleKeyRE.FindAllString(doc, -1)) != 1:
			t.Errorf("node %s (%s): the user data is not a stub naming one bundle:\n%.1500s", st.Node, st.InstanceID, doc)
		case strings.Contains(doc, "-----BEGIN") || strings.Contains(doc, bootstrap.KubeadmPath):
			t.Errorf("node %s (%s): the user data carries a PEM block or the kubeadm configuration", st.Node, st.InstanceID)
		}
	}
	if nodes == 0 {
		t.Fatal("the node agent registered no node: nothing to check")
	}
}
