package nodeagent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/alerting"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// editedUserData is o's user data with the file at path changed by edit, written back
// unencoded, as a node whose bootstrap lacked something would carry it.
func editedUserData(t *testing.T, o bootstrap.Options, path string, edit func(string) string) string {
	t.Helper()
	return base64.StdEncoding.EncodeToString([]byte(editedDoc(t, o, path, edit)))
}

// editedDoc is editedUserData before Base64.
func editedDoc(t *testing.T, o bootstrap.Options, path string, edit func(string) string) string {
	t.Helper()
	doc, err := bootstrap.UnpackUserData(renderDoc(t, o))
	if err != nil {
		t.Fatal(err)
	}
	var cc map[string]any
	if err := yaml.Unmarshal([]byte(doc), &cc); err != nil {
		t.Fatal(err)
	}
	files, _ := cc["write_files"].([]any)
	found := false
	for _, f := range files {
		wf := f.(map[string]any)
		if wf["path"] != path {
			continue
		}
		enc, _ := wf["encoding"].(string)
		content, err := decodeContent(enc, wf["content"].(string))
		if err != nil {
			t.Fatal(err)
		}
		edited := edit(content)
		if edited == content {
			t.Fatalf("the edit left %s as it was", path)
		}
		wf["content"], found = edited, true
		delete(wf, "encoding")
	}
	if !found {
		t.Fatalf("the user data writes no %s", path)
	}
	b, err := yaml.Marshal(cc)
	if err != nil {
		t.Fatal(err)
	}
	return "#cloud-config\n" + string(b)
}

// withoutRenewal is a control-plane node's user data whose bootstrap does not enable the renewal
// timer (its files still there), as a bootstrap without it would leave the node.
func withoutRenewal(t *testing.T, o bootstrap.Options) string {
	return base64.StdEncoding.EncodeToString([]byte(withoutRenewalDoc(t, o)))
}

func withoutRenewalDoc(t *testing.T, o bootstrap.Options) string {
	return editedDoc(t, o, bootstrap.ScriptPath, func(s string) string { return strings.ReplaceAll(s, " gpucluster-cert-renew.timer", "") })
}

const day = 24 * time.Hour

// TestControlPlaneCertsRenewedBeforeTheyLapse: a control plane of three and a GPU worker as the
// bootstrap renders them, played day by day for 800 days: each control-plane node's renewal
// timer (read from its files: daily, bootstrap.CertRenewBefore ahead) renews its year-long
// certificates before they end, so they never come within the alert's 30 days, nothing is
// counted as a failure and every certificate ends more than a year after the cluster formed; the
// kubelets rotate theirs. With the bootstrap's enabling of the timer removed, each control-plane
// node's certificates lapse on the 365th day, counted once per node, and its status says why.
func TestControlPlaneCertsRenewedBeforeTheyLapse(t *testing.T) {
	ca := testCAs(t)[0]
	cps := []string{"i-cp", "i-cp2", "i-cp3"}
	t.Run("with the renewal timer", func(t *testing.T) {
		c := clockedControlPlane(t, firstControlPlane(ca), joiningControlPlane(ca))
		formed := c.view.Now
		wantJoin(t, c.boot(0, instance("i-gpu1", "10.0.1.11", userData(t, gpuWorker(ca)), true)), "")
		for range 800 {
			c.at(day)
			for _, id := range cps {
				if left := c.a.CertsExpire(id).Sub(c.view.Now); left <= alerting.CertificateExpiryWarning {
					t.Fatalf("day %.0f: %s's certificates have %s left: the alert fires", c.view.Now.Sub(formed).Hours()/24, id, left)
				}
			}
		}
		if f := c.a.Failures(); len(f) != 0 {
			t.Errorf("failures: %+v", f)
		}
		for _, id := range cps {
			if end := c.a.CertsExpire(id); end.Before(formed.Add(800 * day)) {
				t.Errorf("%s's certificates end %s: never renewed past the first years", id, end)
			}
		}
		if r := c.a.plans["i-cp2"].plan.CertRenewer; r == nil || *r != (CertRenewer{Period: day, Before: bootstrap.CertRenewBefore}) {
			t.Fatalf("renewal timer read as %+v, want daily, %s ahead", r, bootstrap.CertRenewBefore)
		}
		if r := c.a.plans["i-gpu1"].plan.CertRenewer; r != nil {
			t.Errorf("a worker has a renewal timer: %+v", r)
		}
	})
	t.Run("the clock moved 400 days at once", func(t *testing.T) {
		c := clockedControlPlane(t, firstControlPlane(ca), joiningControlPlane(ca))
		formed := c.view.Now
		c.at(400 * day)
		if f := c.a.Failures(); len(f) != 0 {
			t.Errorf("failures: %+v", f)
		}
		// Renewed on the first daily run with under 60 days left: day 306 (365 - 60 = 305 days
		// and a bit after the node registered), for a year from then.
		if end, want := c.a.CertsExpire("i-cp"), formed.Add(306*day+certValidity); !end.Equal(want) {
			t.Errorf("i-cp's certificates end %s, want %s", end, want)
		}
	})
	t.Run("without the renewal timer", func(t *testing.T) {
		c := clockedControlPlaneOf(t, withoutRenewal(t, firstControlPlane(ca)), withoutRenewal(t, joiningControlPlane(ca)))
		if r := c.a.plans["i-cp"].plan.CertRenewer; r != nil {
			t.Fatalf("renewal timer read without its enabling: %+v", r)
		}
		if notes := statusOf(c.a, "i-cp2").Notes; !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "no timer renews") }) {
			t.Errorf("i-cp2's notes on day one %q do not say nothing renews its certificates", notes)
		}
		c.at(364 * day)
		if f := c.a.Failures(); len(f) != 0 {
			t.Fatalf("day 364: failures %+v", f)
		}
		c.at(day)
		c.at(day)
		f := c.a.Failures()
		if len(f) != len(cps) {
			t.Fatalf("day 366: %d failures, want one per control-plane node: %+v", len(f), f)
		}
		for _, x := range f {
			if !strings.Contains(x.Reason, "control-plane certificates kubeadm made expired") {
				t.Errorf("failure %+v does not say the certificates expired", x)
			}
		}
		if st := statusOf(c.a, "i-cp2"); !strings.Contains(st.Reason, "x509: certificate has expired") {
			t.Errorf("i-cp2's status %q does not say its certificates expired", st.Reason)
		}
	})
}

// TestKubeletWithoutRotationLapses: a worker whose kubelet patch sets rotateCertificates: false
// is refused by the API server a year after it joined (one failure, its Node NotReady and its
// status saying why);
// the bootstrap's own worker, which rotates, is not.
func TestKubeletWithoutRotationLapses(t *testing.T) {
	ca := testCAs(t)[0]
	c := clockedControlPlane(t, firstControlPlane(ca), joiningControlPlane(ca))
	noRotation := editedUserData(t, gpuWorker(ca), bootstrap.KubeletPatchPath, func(s string) string {
		return strings.Replace(s, "rotateCertificates: true", "rotateCertificates: false", 1)
	})
	wantJoin(t, c.boot(0, instance("i-gpu1", "10.0.1.11", noRotation, true)), "")
	wantJoin(t, c.boot(0, instance("i-gpu2", "10.0.1.16", userData(t, gpuWorker(ca)), true)), "")
	for id, want := range map[string]bool{"i-gpu1": true, "i-gpu2": false, "i-cp": false} {
		notes := statusOf(c.a, id).Notes
		if got := slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "does not rotate") }); got != want {
			t.Errorf("%s's notes on day one %q: a note that the kubelet does not rotate %v, want %v", id, notes, got, want)
		}
	}
	c.at(364 * day)
	c.at(2 * day)
	var kubelet []Failure
	for _, f := range c.a.Failures() {
		if strings.Contains(f.Reason, "kubelet's client certificate") {
			kubelet = append(kubelet, f)
		}
	}
	if len(kubelet) != 1 || kubelet[0].InstanceID != "i-gpu1" || !strings.Contains(kubelet[0].Reason, "rotateCertificates: false") {
		t.Fatalf("kubelet failures %+v, want one, of i-gpu1, naming rotateCertificates", kubelet)
	}
	c.at(day)
	if n := len(c.a.Failures()); n != len(kubelet)+countControlPlaneLapses(c.a.Failures()) {
		t.Errorf("the kubelet's lapse was counted again: %+v", c.a.Failures())
	}
	if st := statusOf(c.a, "i-gpu1"); !strings.Contains(st.Reason, "refuses the kubelet") {
		t.Errorf("i-gpu1's status %q does not say its kubelet is refused", st.Reason)
	}
	kube := c.a.kube.(*fakeKube)
	for name, want := range map[string]string{statusOf(c.a, "i-gpu1").Node: "stopped", statusOf(c.a, "i-gpu2").Node: "fake"} {
		if got := kube.nodes[name].Annotations[KwokNodeAnnotation]; got != want {
			t.Errorf("node %s is left to kwok as %q, want %q (stopped: its kubelet posts no status, so it is NotReady)", name, got, want)
		}
	}
	if st := statusOf(c.a, "i-gpu2"); st.Reason != "" {
		t.Errorf("the rotating worker i-gpu2: %q", st.Reason)
	}
	// Released while it still runs a pod, i-gpu1 is a failure of its own: its lapse, counted
	// before, does not stand for the pods killed without eviction.
	kube.running = map[string][]string{statusOf(c.a, "i-gpu1").Node: {"default/train"}}
	c.view.Instances = slices.DeleteFunc(c.view.Instances, func(in emulator.InstanceView) bool { return in.ID == "i-gpu1" })
	c.a.Sync(context.Background())
	if !slices.ContainsFunc(c.a.Failures(), func(f Failure) bool {
		return f.InstanceID == "i-gpu1" && strings.Contains(f.Reason, "deleted while running 1 pods: default/train")
	}) {
		t.Errorf("i-gpu1 released while running default/train after its kubelet lapsed: no failure says so: %+v", c.a.Failures())
	}
}

func countControlPlaneLapses(fs []Failure) int {
	n := 0
	for _, f := range fs {
		if strings.Contains(f.Reason, "control-plane certificates") {
			n++
		}
	}
	return n
}

// advanceClock moves the emulator's clock as a test or an operator does: POST /_emulator/clock.
func (s *cloudScenario) advanceClock(t *testing.T, d time.Duration) {
	t.Helper()
	resp, err := http.Post(s.url+emulator.ClockPath, "application/json", strings.NewReader(`{"advance":"`+d.String()+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", emulator.ClockPath, resp.Status)
	}
}

// failures answers the failures of GET /_emulator/nodes.
func (s *cloudScenario) failures(t *testing.T) []Failure {
	t.Helper()
	resp, err := http.Get(s.url + emulator.NodesPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Failures []Failure }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.Failures
}

// TestCertsThroughTheClock: a first control-plane node created through the SDK path, played by
// the agent over the real emulator whose clock POST /_emulator/clock moves: with the bootstrap's
// renewal timer nothing lapses across 400 days; with its enabling removed, the node's
// certificates lapse in the 366th day, a failure /_emulator/nodes reports.
func TestCertsThroughTheClock(t *testing.T) {
	ca := testCAs(t)[0]
	for _, tc := range []struct {
		name  string
		doc   func(bootstrap.Options) string
		lapse bool
	}{
		{"with the renewal timer", func(o bootstrap.Options) string { return renderDoc(t, o) }, false},
		{"without the renewal timer", func(o bootstrap.Options) string { return withoutRenewalDoc(t, o) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startCloud(t, true)
			cp := s.run(t, "ecs.g7.xlarge", "cp-0", tc.doc(s.behind(firstControlPlane(ca))))
			s.backends(t, cp)
			a := s.startAgent(t, newFakeKube())
			s.settle(t, a, []string{cp}, registered)
			s.advanceClock(t, 364*day)
			a.Sync(t.Context())
			if f := s.failures(t); len(f) != 0 {
				t.Fatalf("day 364: failures %+v", f)
			}
			s.advanceClock(t, 2*day)
			a.Sync(t.Context())
			s.advanceClock(t, 34*day)
			a.Sync(t.Context())
			f := s.failures(t)
			if lapsed := len(f) == 1 && f[0].InstanceID == cp && strings.Contains(f[0].Reason, "certificates kubeadm made expired"); lapsed != tc.lapse || len(f) > 1 {
				t.Errorf("day 400: failures %+v, want a lapse of %s: %v", f, cp, tc.lapse)
			}
			if st := s.nodes(t)[cp]; strings.Contains(st.Reason, "x509") != tc.lapse {
				t.Errorf("day 400: %s's status %q, want its certificates expired: %v", cp, st.Reason, tc.lapse)
			}
		})
	}
}

// TestTimerReading: a timer is enabled wherever it stands in a systemctl enable --now line, and
// not by a word after the unit list ends; its period is OnUnitActiveSec, else an OnCalendar
// shorthand, else unknown (0), as the agent cannot play a calendar expression.
func TestTimerReading(t *testing.T) {
	script := "systemctl enable --now a.timer b.timer && echo c.timer\nsystemctl enable --now d.service\n"
	for timer, want := range map[string]bool{"a.timer": true, "b.timer": true, "c.timer": false, "d.timer": false} {
		if got := enablesTimer(script, timer); got != want {
			t.Errorf("enablesTimer(%s) = %v, want %v", timer, got, want)
		}
	}
	for unit, want := range map[string]time.Duration{
		"[Timer]\nOnCalendar=daily\n":                        day,
		"[Timer]\nOnCalendar=monthly\nPersistent=true\n":     31 * day,
		"[Timer]\nOnBootSec=2min\nOnUnitActiveSec=1h\n":      time.Hour,
		"[Timer]\nOnCalendar=daily\nOnUnitActiveSec=30min\n": 30 * time.Minute,
		"[Timer]\nOnCalendar=Mon *-*-* 03:00:00\n":           0,
	} {
		if got := timerPeriod(unit); got != want {
			t.Errorf("timerPeriod(%q) = %s, want %s", unit, got, want)
		}
	}
}
