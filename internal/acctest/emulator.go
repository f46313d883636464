package acctest

import (
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud/cloudtest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// Emulator is an in-process emulator for one test, reached over real HTTP on loopback.
type Emulator struct {
	*emulator.Server
	URL string
}

// EmulatorOption adjusts the emulator's configuration before it starts.
type EmulatorOption func(*emulator.Config)

// WithBootTime sets how long instances take from Pending to Running.
func WithBootTime(d time.Duration) EmulatorOption {
	return func(c *emulator.Config) { c.BootTime = d }
}

// StartEmulator starts an emulator on a free loopback port and stops it when the test ends.
func StartEmulator(t *testing.T, opts ...EmulatorOption) *Emulator {
	t.Helper()
	cfg := emulator.Config{AccessKey: AccessKey, SecretKey: SecretKey, BootTime: 200 * time.Millisecond}
	for _, o := range opts {
		o(&cfg)
	}
	srv, url := cloudtest.StartEmulator(t, cfg)
	return &Emulator{Server: srv, URL: url}
}

// Config returns a provider block pointed at this emulator with its credentials.
func (e *Emulator) Config(extra ...string) string {
	return ProviderBlock(e.URL, AccessKey, SecretKey, extra...)
}
