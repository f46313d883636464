package emulator

import (
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

// TestGracefulStopWaitsForTheGuest: a normal StopInstances (ForceStop false) signals the guest's
// operating system, which shuts down in its own time; ForceStop is a power-off the guest never
// sees (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-stopinstances).
// A guest model that delays its shutdown (the kubelet's inhibitor lock, graceful node shutdown)
// keeps the instance Stopping until it powers off, and the view says the guest was signalled.
func TestGracefulStopWaitsForTheGuest(t *testing.T) {
	e := newEnv(t, Config{BootTime: time.Millisecond})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	held, forced, plain := e.runOne(f), e.runOne(f), e.runOne(f)
	for _, id := range []string{held, forced, plain} {
		for e.describe([]string{id})[0].Status != "Running" {
			time.Sleep(time.Millisecond)
		}
	}
	for _, id := range []string{held, forced} {
		e.s.DelayGuestShutdown(id, time.Hour)
	}
	stop := func(id string, force bool) {
		r := ecs.CreateStopInstancesRequest()
		r.RegionId = testRegion
		r.InstanceId = &[]string{id}
		r.ForceStop = requests.NewBoolean(force)
		_, err := e.ecs.StopInstances(r)
		must(t, err)
	}
	stop(held, false)
	stop(forced, true)
	stop(plain, false)
	if got := e.nextStatus(forced, "Stopping"); got != "Stopped" {
		t.Fatalf("force-stopped instance went %s, want Stopped: ForceStop does not wait for the guest", got)
	}
	if got := e.nextStatus(plain, "Stopping"); got != "Stopped" {
		t.Fatalf("a guest that does not delay its shutdown: %s, want Stopped", got)
	}
	e.advance(time.Minute) // 60,000 boot times: an instance not held would be Stopped long since
	if got := e.describe([]string{held})[0].Status; got != "Stopping" {
		t.Fatalf("held instance %s, want Stopping until its guest powers off", got)
	}
	signalled := map[string]bool{}
	for _, in := range e.s.View().Instances {
		signalled[in.ID] = in.ShutdownSignalled
	}
	if !signalled[held] || signalled[forced] || signalled[plain] {
		t.Fatalf("ShutdownSignalled = %v, want only the held instance %s", signalled, held)
	}
	e.s.PowerOffFromGuest(held)
	if got := e.nextStatus(held, "Stopping"); got != "Stopped" {
		t.Fatalf("held instance after its guest powered off: %s, want Stopped", got)
	}
}
