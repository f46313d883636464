package nodeagent

import (
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// TestStaticChecks changes one thing of a network where every node registers and expects the
// node it breaks to stay out, for the reason the real node's bootstrap would fail.
func TestStaticChecks(t *testing.T) {
	cas := testCAs(t)
	good, wrong := cas[0], cas[1]
	cases := []struct {
		name   string
		change func(t *testing.T, v *emulator.View)
		// want is, per instance, "" for registered or a piece of the reason.
		want map[string]string
	}{
		{"everything reachable", func(*testing.T, *emulator.View) {}, map[string]string{"i-cp": "", "i-gpu1": ""}},
		// The route checks judge a bootstrap that needs the internet: the upstream one, the default
		// outside mainland China (abroad). The in-region one of testRegion needs no route.
		{"no NAT gateway: no egress", abroad(func(_ *testing.T, v *emulator.View) { v.NatGateways = nil }),
			map[string]string{"i-cp": NoRouteReason, "i-gpu1": NoRouteReason}},
		{"no NAT gateway: the in-region bootstrap needs none", func(_ *testing.T, v *emulator.View) { v.NatGateways = nil },
			map[string]string{"i-cp": "", "i-gpu1": ""}},
		{"SNAT entry of another vSwitch", abroad(func(t *testing.T, v *emulator.View) {
			instanceByID(t, v, "i-gpu1").VSwitchID, instanceByID(t, v, "i-gpu1").PrivateIP = "vsw-2", "10.0.2.11"
		}), map[string]string{"i-cp": "", "i-gpu1": NoRouteReason + ": vSwitch vsw-2"}},
		{"SNAT entry by CIDR block", abroad(func(_ *testing.T, v *emulator.View) {
			v.NatGateways[0].Snat[0] = emulator.SnatEntryView{ID: "snat-2", SourceCIDR: "10.0.0.0/16", SnatIP: "47.96.0.1"}
		}), map[string]string{"i-cp": "", "i-gpu1": ""}},
		{"NAT gateway of another VPC", abroad(func(_ *testing.T, v *emulator.View) { v.NatGateways[0].VpcID = "vpc-2" }),
			map[string]string{"i-cp": NoRouteReason, "i-gpu1": NoRouteReason}},
		{"EIPs instead of NAT", abroad(func(_ *testing.T, v *emulator.View) {
			v.NatGateways = nil
			v.EIPs = []emulator.EIPView{{ID: "eip-1", IP: "47.96.0.2", InstanceID: "i-cp", InstanceType: "EcsInstance"},
				{ID: "eip-2", IP: "47.96.0.3", InstanceID: "i-gpu1", InstanceType: "EcsInstance"}}
		}), map[string]string{"i-cp": "", "i-gpu1": ""}},
		{"public IPs instead of NAT", abroad(func(t *testing.T, v *emulator.View) {
			v.NatGateways = nil
			instanceByID(t, v, "i-cp").PublicIP, instanceByID(t, v, "i-gpu1").PublicIP = "47.96.1.1", "47.96.1.2"
		}), map[string]string{"i-cp": "", "i-gpu1": ""}},
		{"EIP bound to a NAT gateway, not to the instance", abroad(func(_ *testing.T, v *emulator.View) {
			v.NatGateways = nil
			v.EIPs = []emulator.EIPView{{ID: "eip-1", IP: "47.96.0.2", InstanceID: "ngw-1", InstanceType: "Nat"}}
		}), map[string]string{"i-cp": NoRouteReason, "i-gpu1": NoRouteReason}},
		// The in-VPC mirror serves every package (NVIDIA's included); the images are a setting
		// of their own (image_registry).
		{"in-VPC mirror does not replace the image registry", abroad(func(t *testing.T, v *emulator.View) {
			v.NatGateways = nil
			cp := upstream(firstControlPlane(good))
			cp.PackageMirror = bootstrap.MirrorAlibabaVPC
			instanceByID(t, v, "i-cp").UserData = userData(t, cp)
		}), map[string]string{"i-cp": "registry.k8s.io needs the internet, and the instance has no route to it", "i-gpu1": NoRouteReason}},
		{"wrong CA hash", func(t *testing.T, v *emulator.View) {
			instanceByID(t, v, "i-gpu1").UserData = userData(t, gpuWorker(wrong))
		}, map[string]string{"i-cp": "", "i-gpu1": "its CA hash " + good.hash + " is not among the pinned caCertHashes " + wrong.hash}},
		{"CA made by kubeadm at boot", func(t *testing.T, v *emulator.View) {
			o := firstControlPlane(good)
			o.Kubernetes.CACertPEM, o.Kubernetes.CAKeyPEM = "", ""
			instanceByID(t, v, "i-cp").UserData = userData(t, o)
		}, map[string]string{"i-cp": "", "i-gpu1": "the cluster CA was made by kubeadm init on i-cp at boot"}},
		{"CA verification skipped", func(t *testing.T, v *emulator.View) {
			o := gpuWorker(wrong)
			o.Kubernetes.CACertHash, o.Kubernetes.InsecureSkipCAVerification = "", true
			instanceByID(t, v, "i-gpu1").UserData = userData(t, o)
		}, map[string]string{"i-cp": "", "i-gpu1": ""}},
		{"wrong join token", func(t *testing.T, v *emulator.View) {
			o := gpuWorker(good)
			o.Kubernetes.JoinToken = "zzzzzz.0123456789abcdef"
			instanceByID(t, v, "i-gpu1").UserData = userData(t, o)
		}, map[string]string{"i-cp": "", "i-gpu1": "the join token is not a bootstrap token of the cluster"}},
		{"second kubeadm init", func(t *testing.T, v *emulator.View) {
			o := firstControlPlane(good)
			o.Kubernetes.CertificateKey = "" // not highly available: its script always runs kubeadm init
			o.Kubernetes.APIEndpoint, o.Kubernetes.APIServerName = "", ""
			first := userData(t, o)
			instanceByID(t, v, "i-cp").UserData = first
			v.Instances = append(v.Instances, instance("i-cp2", "10.0.1.12", first, false))
		}, map[string]string{"i-cp": "", "i-cp2": "second kubeadm init: the API server at 10.0.1.10:6443 was already initialised by i-cp (iz" + "i-cpz)",
			"i-gpu1": `the API server's certificate does not name ` + apiName + `: kubeadm init on i-cp made it for its controlPlaneEndpoint ""`}},
		{"replacement first node of a highly available control plane joins", func(t *testing.T, v *emulator.View) {
			v.Instances = append(v.Instances, instance("i-cp2", "10.0.1.12", userData(t, firstControlPlane(good)), false))
			v.LoadBalancers[0].BackendIDs = append(v.LoadBalancers[0].BackendIDs, "i-cp2")
		}, map[string]string{"i-cp": "", "i-cp2": "", "i-gpu1": ""}},
		{"control-plane join with another certificate key", func(t *testing.T, v *emulator.View) {
			o := joiningControlPlane(good)
			o.Kubernetes.CertificateKey = wrong.certKey
			v.Instances = append(v.Instances, instance("i-cp2", "10.0.1.12", userData(t, o), false))
		}, map[string]string{"i-cp": "", "i-cp2": "the certificate key does not decrypt", "i-gpu1": ""}},
		{"control-plane join", func(t *testing.T, v *emulator.View) {
			v.Instances = append(v.Instances, instance("i-cp2", "10.0.1.12", userData(t, joiningControlPlane(good)), false))
		}, map[string]string{"i-cp": "", "i-cp2": "", "i-gpu1": ""}},
		{"no listener on 6443", func(_ *testing.T, v *emulator.View) { v.LoadBalancers[0].Listeners[0].Port = 443 },
			map[string]string{"i-cp": "", "i-gpu1": "load balancer lb-1 (the API endpoint " + apiName + ":6443 at 10.0.1.200) has no TCP listener on port 6443"}},
		{"listener stopped", func(_ *testing.T, v *emulator.View) { v.LoadBalancers[0].Listeners[0].Running = false },
			map[string]string{"i-cp": "", "i-gpu1": "is stopped"}},
		{"load balancer without backends", func(_ *testing.T, v *emulator.View) { v.LoadBalancers[0].BackendIDs = nil },
			map[string]string{"i-cp": "", "i-gpu1": "has no running backend server"}},
		{"endpoint is nothing in the VPC", func(_ *testing.T, v *emulator.View) { v.LoadBalancers[0].Address = "10.0.1.201" },
			map[string]string{"i-cp": "", "i-gpu1": "is neither a load balancer nor a running instance"}},
		{"control plane not running yet", func(t *testing.T, v *emulator.View) { instanceByID(t, v, "i-cp").Status = "Starting" },
			map[string]string{"i-cp": "not Running", "i-gpu1": "no API server answers at " + apiName + ":6443 at 10.0.1.200 yet"}},
		{"worker in another group, no rule", func(t *testing.T, v *emulator.View) {
			instanceByID(t, v, "i-gpu1").SecurityGroupIDs = []string{"sg-2"}
		}, map[string]string{"i-cp": "", "i-gpu1": "the security groups do not let TCP from 10.0.1.11"}},
		{"worker in another group, CIDR rule accepts 6443", func(t *testing.T, v *emulator.View) {
			instanceByID(t, v, "i-gpu1").SecurityGroupIDs = []string{"sg-2"}
			sg := v.SecurityGroups["sg-1"]
			sg.Rules = []emulator.SecurityRuleView{{Direction: "ingress", Protocol: "TCP", PortRange: "6443/6443", CIDR: "10.0.1.0/24", Policy: "accept", Priority: 2}}
			v.SecurityGroups["sg-1"] = sg
		}, map[string]string{"i-cp": "", "i-gpu1": ""}},
		{"worker in another group, drop wins the tie", func(t *testing.T, v *emulator.View) {
			instanceByID(t, v, "i-gpu1").SecurityGroupIDs = []string{"sg-2"}
			sg := v.SecurityGroups["sg-1"]
			sg.Rules = []emulator.SecurityRuleView{
				{Direction: "ingress", Protocol: "TCP", PortRange: "6443/6443", CIDR: "10.0.1.0/24", Policy: "accept", Priority: 2},
				{Direction: "ingress", Protocol: "ALL", PortRange: "-1/-1", CIDR: "10.0.0.0/8", Policy: "drop", Priority: 2}}
			v.SecurityGroups["sg-1"] = sg
		}, map[string]string{"i-cp": "", "i-gpu1": "the security groups do not let TCP"}},
		{"worker in another group, source group rule", func(t *testing.T, v *emulator.View) {
			instanceByID(t, v, "i-gpu1").SecurityGroupIDs = []string{"sg-2"}
			sg := v.SecurityGroups["sg-1"]
			sg.Rules = []emulator.SecurityRuleView{{Direction: "ingress", Protocol: "ALL", PortRange: "-1/-1", GroupID: "sg-2", Policy: "accept", Priority: 1}}
			v.SecurityGroups["sg-1"] = sg
		}, map[string]string{"i-cp": "", "i-gpu1": ""}},
		{"egress drop on the worker", func(t *testing.T, v *emulator.View) {
			instanceByID(t, v, "i-gpu1").SecurityGroupIDs = []string{"sg-2"}
			sg1 := v.SecurityGroups["sg-1"]
			sg1.Rules = []emulator.SecurityRuleView{{Direction: "ingress", Protocol: "ALL", PortRange: "-1/-1", GroupID: "sg-2", Policy: "accept", Priority: 1}}
			v.SecurityGroups["sg-1"] = sg1
			sg2 := v.SecurityGroups["sg-2"]
			sg2.Rules = []emulator.SecurityRuleView{{Direction: "egress", Protocol: "TCP", PortRange: "1/65535", CIDR: "0.0.0.0/0", Policy: "drop", Priority: 1}}
			v.SecurityGroups["sg-2"] = sg2
		}, map[string]string{"i-cp": "", "i-gpu1": "the security groups do not let TCP"}},
		{"user's own cloud-config merged after the bootstrap", func(t *testing.T, v *emulator.View) {
			instanceByID(t, v, "i-gpu1").UserData = userData(t, gpuWorker(good), "#cloud-config\nwrite_files:\n- path: /etc/motd\n  content: hello\n")
		}, map[string]string{"i-cp": "", "i-gpu1": ""}},
		{"two workers with one host name", func(t *testing.T, v *emulator.View) {
			w2 := *instanceByID(t, v, "i-gpu1")
			w2.ID, w2.PrivateIP = "i-gpu2", "10.0.1.12"
			v.Instances = append(v.Instances, w2)
		}, map[string]string{"i-cp": "", "i-gpu1": "", "i-gpu2": `a Node with name "izi-gpu1z" and status Ready already exists in the cluster (instance i-gpu1)`}},
		{"user data without the bootstrap", func(t *testing.T, v *emulator.View) {
			instanceByID(t, v, "i-gpu1").UserData = "IyEvYmluL3NoCmVjaG8gaGkK" // #!/bin/sh echo hi
		}, map[string]string{"i-cp": "", "i-gpu1": "user data is neither #cloud-config nor a MIME multipart document"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := goodView(t)
			tc.change(t, &v)
			kube := newFakeKube()
			got := syncOnce(t, v, kube)
			for id, want := range tc.want {
				st, ok := got[id]
				if !ok {
					t.Fatalf("no status for %s", id)
				}
				if want == "" {
					if st.Node == "" || st.Reason != "" {
						t.Errorf("%s: not registered: %s", id, st.Reason)
					}
					if kube.nodes[st.Node] == nil {
						t.Errorf("%s: node %q not in the API server", id, st.Node)
					}
					continue
				}
				if st.Node != "" {
					t.Errorf("%s registered as %s, want it refused: %s", id, st.Node, want)
				}
				mustContain(t, id+" reason", st.Reason, want)
			}
		})
	}
}

// abroad moves the view's nodes to ap-southeast-1 on the bootstrap's defaults there (upstream
// sources, through the internet) before change.
func abroad(change func(*testing.T, *emulator.View)) func(*testing.T, *emulator.View) {
	return func(t *testing.T, v *emulator.View) {
		ca := testCAs(t)[0]
		setRegion(v, "ap-southeast-1")
		instanceByID(t, v, "i-cp").UserData = userData(t, upstream(firstControlPlane(ca)))
		instanceByID(t, v, "i-gpu1").UserData = userData(t, upstream(gpuWorker(ca)))
		change(t, v)
	}
}
