package nodeagent

import (
	"context"
	"fmt"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// BenchmarkSync measures one round of the agent over a cluster of 1,000 GPU workers: the first
// round (every user data decoded, every node checked and registered with a fake API server) and
// a steady round (all registered: what each poll costs afterwards).
func BenchmarkSync(b *testing.B) {
	v := goodView(b)
	worker := v.Instances[1]
	v.Instances = v.Instances[:1]
	for i := range 1000 {
		in := worker
		in.ID, in.HostName, in.PrivateIP = fmt.Sprintf("i-gpu%04d", i), fmt.Sprintf("gpu-%04d", i), fmt.Sprintf("10.0.%d.%d", 1+i/250, 1+i%250)
		v.Instances = append(v.Instances, in)
	}
	view := func() emulator.View { return v }
	b.Run("first round, 1000 workers", func(b *testing.B) {
		for b.Loop() {
			a := New(view, newFakeKube(), nil)
			a.Sync(context.Background())
		}
	})
	b.Run("steady round, 1000 workers", func(b *testing.B) {
		a := New(view, newFakeKube(), nil)
		a.Sync(context.Background())
		for b.Loop() {
			a.Sync(context.Background())
		}
	})
}
