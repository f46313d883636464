package emulator

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

// gpuFaultsCall sends one request to GPUFaultsPath and answers its status and body.
func (e *env) gpuFaultsCall(method, query, body string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+GPUFaultsPath+query, strings.NewReader(body))
	must(e.t, err)
	resp, err := http.DefaultClient.Do(req)
	must(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(e.t, err)
	return resp.StatusCode, string(b)
}

// TestGPUFaultsEndpoint: a fault is set on a GPU of a live instance, shown by GET and in the
// View the node agent reads, replaced by a second POST of the same GPU, cleared by DELETE (one
// GPU, then all); what does not name a live instance's GPU, or sets nothing, is a 400 that says
// why.
func TestGPUFaultsEndpoint(t *testing.T) {
	e := newEnv(t, Config{StateFile: filepath.Join(t.TempDir(), "state.json"), BootTime: 100 * time.Millisecond})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	resp, err := e.ecs.RunInstances(e.runReq(f, "ecs.gn7e-c16g1.32xlarge", 1)) // 8 GPUs
	must(t, err)
	id := resp.InstanceIdSets.InstanceIdSet[0]
	cpu, err := e.ecs.RunInstances(e.runReq(f, "ecs.g7.xlarge", 1))
	must(t, err)
	cpuID := cpu.InstanceIdSets.InstanceIdSet[0]

	refused := []struct{ body, says string }{
		{`{"instance_id":"i-nope","gpu":0,"xid":79}`, `instance "i-nope" does not exist`},
		{`{"instance_id":"` + id + `","gpu":8,"xid":79}`, "has 8 GPUs, indexed 0 to 7"},
		{`{"instance_id":"` + id + `","gpu":-1,"xid":79}`, "has 8 GPUs"},
		{`{"instance_id":"` + cpuID + `","gpu":0,"xid":79}`, "has no GPU"},
		{`{"instance_id":"` + id + `","gpu":0}`, "sets xid, nvlink_gbs or erdma_gbps"},
		{`{"instance_id":"` + id + `","gpu":0,"nvlink_gbs":-1}`, "not negative"},
		{`{"instance_id":"` + id + `","gpu":0,"nvlink_gbps":100}`, "unknown field"},
	}
	for _, c := range refused {
		if code, body := e.gpuFaultsCall(http.MethodPost, "", c.body); code != http.StatusBadRequest || !strings.Contains(body, c.says) {
			t.Errorf("POST %s: %d %q, want 400 saying %q", c.body, code, body, c.says)
		}
	}
	for _, body := range []string{
		`{"instance_id":"` + id + `","gpu":3,"xid":48}`,
		`{"instance_id":"` + id + `","gpu":1,"nvlink_gbs":150,"erdma_gbps":40}`,
		`{"instance_id":"` + id + `","gpu":3,"xid":79}`, // replaces GPU 3's
	} {
		if code, got := e.gpuFaultsCall(http.MethodPost, "", body); code != http.StatusOK {
			t.Fatalf("POST %s: %d %s", body, code, got)
		}
	}
	want := []GPUFault{{InstanceID: id, GPU: 1, NVLinkGBs: 150, ERDMAGbps: 40}, {InstanceID: id, GPU: 3, XID: 79}}
	_, body := e.gpuFaultsCall(http.MethodGet, "", "")
	var listed struct {
		Faults []GPUFault `json:"gpu_faults"`
	}
	must(t, json.Unmarshal([]byte(body), &listed))
	if !reflect.DeepEqual(listed.Faults, want) {
		t.Errorf("GET = %+v, want %+v", listed.Faults, want)
	}
	for _, in := range e.s.View().Instances {
		if got := in.GPUFaults; (in.ID == id) != (len(got) > 0) || (in.ID == id && !reflect.DeepEqual(got, want)) {
			t.Errorf("View of %s: GPUFaults %+v", in.ID, got)
		}
	}

	// The faults survive a restart from the state file.
	path := e.s.cfg.StateFile
	e.srv.Close()
	must(t, e.s.Close())
	e = newEnv(t, Config{StateFile: path, BootTime: 100 * time.Millisecond})
	if got := e.s.GPUFaults(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a restart: %+v, want %+v", got, want)
	}

	for _, c := range []struct {
		query string
		code  int
		says  string
	}{
		{"", http.StatusBadRequest, "instance_id is required"},
		{"?instance_id=" + id + "&gpu=x", http.StatusBadRequest, "not a GPU index"},
		{"?instance_id=i-nope", http.StatusBadRequest, "does not exist"},
		{"?instance_id=" + id + "&gpu=3", http.StatusOK, `"cleared":1`}, // GPU 3 reset
		{"?instance_id=" + id + "&gpu=3", http.StatusOK, `"cleared":0`},
	} {
		if code, body := e.gpuFaultsCall(http.MethodDelete, c.query, ""); code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("DELETE %s: %d %q, want %d saying %q", c.query, code, body, c.code, c.says)
		}
	}
	if got := e.s.GPUFaults(); !reflect.DeepEqual(got, want[:1]) {
		t.Errorf("after resetting GPU 3: %+v, want %+v", got, want[:1])
	}
	if code, body := e.gpuFaultsCall(http.MethodDelete, "?instance_id="+id, ""); code != http.StatusOK || !strings.Contains(body, `"cleared":1`) {
		t.Errorf("DELETE every fault: %d %s", code, body)
	}
	if got := e.s.GPUFaults(); len(got) != 0 {
		t.Errorf("after clearing the instance: %+v", got)
	}
	if code, _ := e.gpuFaultsCall(http.MethodPatch, "", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("PATCH: %d", code)
	}

	// A released instance's faults go with it.
	if code, body := e.gpuFaultsCall(http.MethodPost, "", `{"instance_id":"`+id+`","gpu":0,"xid":79}`); code != http.StatusOK {
		t.Fatalf("POST: %d %s", code, body)
	}
	del := ecs.CreateDeleteInstancesRequest()
	del.RegionId, del.InstanceId, del.Force = testRegion, &[]string{id}, requests.NewBoolean(true)
	_, err = e.ecs.DeleteInstances(del)
	must(t, err)
	if got := e.s.GPUFaults(); len(got) != 0 {
		t.Errorf("after releasing %s: %+v", id, got)
	}
}

// TestGPUFaultNextInstance: a fault POSTed for "next" is listed as pending, waits through a
// launch without GPUs, lands on the first instance of the next GPU launch (with that instance's
// id) and no other, and is then no longer pending; one for a GPU the launched type lacks stays
// pending, across a restart, until DELETE ?instance_id=next clears it.
func TestGPUFaultNextInstance(t *testing.T) {
	e := newEnv(t, Config{StateFile: filepath.Join(t.TempDir(), "state.json"), BootTime: 100 * time.Millisecond})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	for _, c := range []struct{ body, says string }{
		{`{"instance_id":"next","gpu":-1,"xid":79}`, "not a GPU index"},
		{`{"instance_id":"next","gpu":0}`, "sets xid, nvlink_gbs or erdma_gbps"},
	} {
		if code, body := e.gpuFaultsCall(http.MethodPost, "", c.body); code != http.StatusBadRequest || !strings.Contains(body, c.says) {
			t.Errorf("POST %s: %d %q, want 400 saying %q", c.body, code, body, c.says)
		}
	}
	for _, body := range []string{`{"instance_id":"next","gpu":2,"xid":79}`, `{"instance_id":"next","gpu":8,"nvlink_gbs":100}`} {
		if code, got := e.gpuFaultsCall(http.MethodPost, "", body); code != http.StatusOK {
			t.Fatalf("POST %s: %d %s", body, code, got)
		}
	}
	pending := func() []GPUFault {
		_, body := e.gpuFaultsCall(http.MethodGet, "", "")
		var listed struct {
			Pending []GPUFault `json:"pending"`
		}
		must(t, json.Unmarshal([]byte(body), &listed))
		return listed.Pending
	}
	beyond := GPUFault{InstanceID: GPUFaultNext, GPU: 8, NVLinkGBs: 100} // an 8-GPU type has GPUs 0 to 7
	if got, want := pending(), []GPUFault{{InstanceID: GPUFaultNext, GPU: 2, XID: 79}, beyond}; !reflect.DeepEqual(got, want) {
		t.Fatalf("GET pending = %+v, want %+v", got, want)
	}

	_, err := e.ecs.RunInstances(e.runReq(f, "ecs.g7.xlarge", 1)) // no GPU: the faults wait
	must(t, err)
	resp, err := e.ecs.RunInstances(e.runReq(f, "ecs.gn7e-c16g1.32xlarge", 2)) // 8 GPUs each
	must(t, err)
	ids := resp.InstanceIdSets.InstanceIdSet
	if got, want := e.s.GPUFaults(), []GPUFault{{InstanceID: ids[0], GPU: 2, XID: 79}}; !reflect.DeepEqual(got, want) {
		t.Errorf("after launching %v: faults %+v, want %+v (the first GPU instance launched, only)", ids, got, want)
	}
	if got := pending(); !reflect.DeepEqual(got, []GPUFault{beyond}) {
		t.Errorf("pending after the launch = %+v, want only %+v", got, beyond)
	}

	path := e.s.cfg.StateFile
	e.srv.Close()
	must(t, e.s.Close())
	e = newEnv(t, Config{StateFile: path, BootTime: 100 * time.Millisecond})
	if got := pending(); !reflect.DeepEqual(got, []GPUFault{beyond}) {
		t.Errorf("pending after a restart = %+v, want %+v", got, beyond)
	}
	if code, body := e.gpuFaultsCall(http.MethodDelete, "?instance_id=next", ""); code != http.StatusOK || !strings.Contains(body, `"cleared":1`) {
		t.Errorf("DELETE ?instance_id=next: %d %s", code, body)
	}
	if got := pending(); len(got) != 0 {
		t.Errorf("pending after DELETE: %+v", got)
	}
}
