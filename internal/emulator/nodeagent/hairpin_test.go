package nodeagent

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// unnamed is o as the node pool rendered it before the API server name: every kubeadm document
// names the load balancer's address.
func unnamed(o bootstrap.Options) bootstrap.Options {
	o.Kubernetes.APIServerName = ""
	return o
}

// haView is goodView with a highly available control plane: the first node i-cp and a joining
// one, i-cp2, both backend servers of the load balancer, as the control-plane pools keep them;
// each node's options pass through edit.
func haView(t *testing.T, edit func(bootstrap.Options) bootstrap.Options) emulator.View {
	t.Helper()
	ca := testCAs(t)[0]
	v := goodView(t)
	v.Instances = append(v.Instances, instance("i-cp2", "10.0.1.12", "", false))
	for id, o := range map[string]bootstrap.Options{"i-cp": firstControlPlane(ca), "i-cp2": joiningControlPlane(ca), "i-gpu1": gpuWorker(ca)} {
		instanceByID(t, &v, id).UserData = userData(t, edit(o))
	}
	v.LoadBalancers[0].BackendIDs = []string{"i-cp", "i-cp2"}
	return v
}

// TestHairpin: a control-plane node that reaches its API through the Classic Load Balancer it
// is a backend server of gets no answer once it serves the API, which is where kubeadm init
// puts the first node; through the API server name, mapped to itself, every node comes up.
func TestHairpin(t *testing.T) {
	same := func(o bootstrap.Options) bootstrap.Options { return o }
	cases := []struct {
		name string
		view func(t *testing.T) emulator.View
		want map[string]string // per instance: "" registered, or a piece of the reason
	}{
		{"today's layout: the first node's kubeadm init goes through the load balancer it backs", func(t *testing.T) emulator.View {
			return haView(t, unnamed)
		}, map[string]string{
			"i-cp":   "kubeadm init on i-cp fails: it reaches its own API server through admin.conf at controlPlaneEndpoint 10.0.1.200:6443: " + HairpinReason + ":",
			"i-cp2":  "no API server answers at 10.0.1.200:6443 yet",
			"i-gpu1": "no API server answers at 10.0.1.200:6443 yet",
		}},
		{"the API server name: control-plane nodes reach themselves, the worker the load balancer", func(t *testing.T) emulator.View {
			return haView(t, same)
		}, map[string]string{"i-cp": "", "i-cp2": "", "i-gpu1": ""}},
		{"a first node outside its load balancer's backends: nothing serves behind it", func(t *testing.T) emulator.View {
			v := haView(t, unnamed)
			v.LoadBalancers[0].BackendIDs = []string{"i-cp2"}
			return v
		}, map[string]string{"i-cp": "kubeadm init on i-cp fails: it reaches its own API server through admin.conf at controlPlaneEndpoint 10.0.1.200:6443: no API server answers"}},
		{"a control-plane node that leaves the name on the load balancer once joined", func(t *testing.T) emulator.View {
			v := haView(t, same)
			keepLB := func(files map[string]string) {
				files[bootstrap.ScriptPath] = strings.ReplaceAll(files[bootstrap.ScriptPath], bootstrap.APIHostsPath+" self", bootstrap.APIHostsPath+" lb")
			}
			doc := rewrittenDoc(t, joiningControlPlane(testCAs(t)[0]), keepLB)
			instanceByID(t, &v, "i-cp2").UserData = base64.StdEncoding.EncodeToString([]byte(doc))
			return v
		}, map[string]string{"i-cp": "", "i-gpu1": "",
			"i-cp2": "once in the control plane, i-cp2 reaches the API at controlPlaneEndpoint " + apiName + ":6443 through kubelet.conf and admin.conf " +
				"(kubelet, the add-ons, the certificate upload): " + HairpinReason + ": " + apiName + ":6443 at 10.0.1.200 is load balancer lb-1"}},
		{"a control-plane node and a worker without the name join a cluster that has one", func(t *testing.T) emulator.View {
			v := haView(t, same)
			ca := testCAs(t)[0]
			instanceByID(t, &v, "i-cp2").UserData = userData(t, unnamed(joiningControlPlane(ca)))
			instanceByID(t, &v, "i-gpu1").UserData = userData(t, unnamed(gpuWorker(ca)))
			return v
		}, map[string]string{"i-cp": "",
			"i-cp2":  apiName + " does not resolve on i-cp2: its bootstrap writes no /etc/hosts entry for it",
			"i-gpu1": "once joined, the kubelet of i-gpu1 reaches the API at " + apiName + ":6443, the cluster-info server"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kube := newFakeKube()
			got := syncOnce(t, tc.view(t), kube)
			for id, want := range tc.want {
				st := got[id]
				if want == "" {
					if st.Node == "" || st.Reason != "" || kube.nodes[st.Node] == nil {
						t.Errorf("%s: not registered: %s", id, st.Reason)
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

// TestReadAPIHosts reads the hosts entry's mode at each step from the scripts the bootstrap
// renders: the load balancer before the node serves, itself from kubeadm init or after its join.
func TestReadAPIHosts(t *testing.T) {
	ca := testCAs(t)[0]
	for _, c := range []struct {
		name string
		o    bootstrap.Options
		want APIHosts
	}{
		{"first node", firstControlPlane(ca), APIHosts{AtInit: "self", AtRejoin: "lb", After: "self"}},
		{"joining control-plane node", joiningControlPlane(ca), APIHosts{AtJoin: "lb", After: "self"}},
		{"worker", gpuWorker(ca), APIHosts{AtJoin: "lb", After: "lb"}},
	} {
		ci, err := DecodeUserData(userData(t, c.o))
		if err != nil {
			t.Fatal(err)
		}
		p, err := PlanNode(ci, "node")
		if err != nil {
			t.Fatal(err)
		}
		c.want.Name, c.want.LB = apiName, lbAddress
		if p.APIHosts == nil || *p.APIHosts != c.want {
			t.Errorf("%s: hosts entry %+v, want %+v", c.name, p.APIHosts, c.want)
		}
	}
	ci, err := DecodeUserData(userData(t, unnamed(gpuWorker(ca))))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := PlanNode(ci, "node"); err != nil || p.APIHosts != nil {
		t.Errorf("a node without the name: hosts entry %+v (%v), want none", p.APIHosts, err)
	}
}
