// Package emulator is an offline emulator of the Alibaba Cloud APIs the
// provider uses: the RPC APIs of ECS (2014-05-26), VPC (2016-04-28, with NAT
// gateways, EIPs and SNAT entries), NAS (2017-06-26), SLB (2014-05-15) and STS
// (2015-04-01), Location's DescribeEndpoints (2015-06-12), plus OSS through package oss. It speaks
// the vendor's wire format, checks signatures, and builds every JSON answer
// from the SDK's own response structs, so a field-name mistake on either side
// breaks a test. Admin endpoints under /_emulator/ drive faults, stock and
// inspection (see docs/guides/emulator.md).
//
// This package is the assembly: it builds the Server (dispatch, signatures, faults, admin
// endpoints, the state file) on package core and serves every product package listed in
// products.go (ecs, ess, location, nas, slb, sts, vpc; oss through oss_wiring.go). It re-exports what its
// users read of a product (InstanceView is ecs.InstanceView) and delegates to the product for
// the rest (SetConsoleOutput, the stock tables). See core's package comment for how a product
// is laid out and how products reach each other.
package emulator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"
)

// Config configures a Server.
type Config struct {
	AccessKey, SecretKey string
	BootTime             time.Duration // Pending -> Starting -> Running takes this long
	ConsistencyDelay     time.Duration // a new instance stays invisible to Describe this long
	GPUQuota             int           // total GPUs of live instances; 0 = DefaultGPUQuota
	StateFile            string        // "" = memory only
	Regions              []string      // served regions; empty = every region in the catalog
	Logf                 func(format string, args ...any)

	// KeyUser names the RAM user AccessKey belongs to; "" makes it the account's own key. STS
	// GetCallerIdentity answers RAMUser or Account for it accordingly (core.AccountID is the
	// account either way).
	KeyUser string
}

// DefaultGPUQuota is generous so only tests that lower it ever hit it.
const DefaultGPUQuota = emuecs.DefaultGPUQuota

// Server is one emulator instance. All state sits behind mu; Describe calls
// share the read lock, so concurrent readers scale.
type Server struct {
	cfg     Config
	regions map[string]*core.Region
	// defaultRegion answers actions whose RegionId is optional and not sent: the first served
	// region in catalog order.
	defaultRegion string

	mu sync.RWMutex
	db *db

	auth   core.Authenticator
	stats  statsCounter
	faults core.FaultInjector
	oss    ossBackend

	plugins  adminPlugins  // admin endpoints of components beside the emulator (HandleAdmin)
	metadata metadataState // the instance metadata service's tokens and role keys (metadata.go)

	dirty     chan struct{}
	stop      chan struct{}
	saverDone chan struct{}
	closeOnce sync.Once
	httpSrv   *http.Server

	clockSkew atomic.Int64 // nanoseconds added to the wall clock; tests move time with it

	// seeUnpruned, when set (the conformance suite sets it), gets every answer as encoded from
	// the SDK struct, before pruneAnswer trims it to the vendor's model: what pruning drops must
	// be only the struct's empty fields, never a value the emulator filled in under a name the
	// vendor does not send.
	seeUnpruned func(key string, body []byte)
}

// New builds a Server, loading StateFile when it exists.
func New(cfg Config) (*Server, error) {
	if cfg.AccessKey == "" {
		cfg.AccessKey = "emulator"
	}
	if cfg.SecretKey == "" {
		cfg.SecretKey = "emulator-secret"
	}
	if cfg.GPUQuota <= 0 {
		cfg.GPUQuota = DefaultGPUQuota
	}
	s := &Server{
		cfg:       cfg,
		dirty:     make(chan struct{}, 1),
		stop:      make(chan struct{}),
		saverDone: make(chan struct{}),
	}
	s.auth.Keys = s.lookupKey
	s.useDB(newDB())
	s.regions = map[string]*core.Region{}
	for _, r := range catalogRegions {
		if len(cfg.Regions) == 0 || contains(cfg.Regions, r.ID) {
			s.regions[r.ID] = r
			if s.defaultRegion == "" {
				s.defaultRegion = r.ID
			}
		}
	}
	if len(s.regions) == 0 {
		return nil, fmt.Errorf("emulator: none of the regions %v is known", cfg.Regions)
	}
	s.oss = newOSSBackend(s)
	if s.oss != nil {
		s.oss.SetObserver(func(action, code string) {
			s.stats.record(action, code)
			s.markDirty() // the saver coalesces; reads cost one extra write at most
		})
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	go s.saver()
	go s.janitor()
	return s, nil
}

// useDB makes d the Server's state and tells ECS the configuration it answers by. Caller holds
// s.mu, or no one else sees s yet.
func (s *Server) useDB(d *db) {
	s.db = d
	d.compute().Configure(emuecs.Settings{ConsistencyDelay: s.cfg.ConsistencyDelay, GPUQuota: s.cfg.GPUQuota})
}

// asyncStatus is the status of a resource that becomes ready asynchronously
// (VPC, vSwitch, file system): pending for half the boot time.
func (s *Server) asyncStatus(created int64, now time.Time, pending, done string) string {
	if time.Duration(now.UnixNano()-created) < s.cfg.BootTime/2 {
		return pending
	}
	return done
}

func (s *Server) now() time.Time { return time.Now().Add(time.Duration(s.clockSkew.Load())) }

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

// Handler serves RPC at "/", admin at "/_emulator/", and OSS for anything else.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// Start listens on listenAddr and serves in the background. It returns the
// base URL ("http://127.0.0.1:PORT").
func (s *Server) Start(listenAddr string) (string, error) {
	return s.StartWith(listenAddr, s.Handler())
}

// StartWith is Start serving h, a handler in front of Handler (the command's HTTPS interception,
// package intercept).
func (s *Server) StartWith(listenAddr string, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", listenAddr)
	if err != nil {
		return "", err
	}
	s.httpSrv = &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	go func() {
		if err := s.httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logf("emulator: serve: %v", err)
		}
	}()
	return "http://" + ln.Addr().String(), nil
}

// Close stops serving (letting in-flight calls finish) and saves the state.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		if s.httpSrv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = s.httpSrv.Shutdown(ctx)
			cancel()
		}
		close(s.stop)
		<-s.saverDone
		s.mu.RLock()
		if e := s.saveLocked(); e != nil && err == nil {
			err = e
		}
		s.mu.RUnlock()
	})
	return err
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_emulator/") {
		s.serveAdmin(w, r)
		return
	}
	if isRPC(r) {
		s.serveRPC(w, r)
		return
	}
	if s.oss == nil {
		writeAPIError(w, errf(404, "InvalidAction.NotFound", "Not an RPC call (no Action) and OSS is not available."), newRequestID(), r.Host)
		return
	}
	if s.applyFaults(w, r, "OSS", true) {
		return
	}
	s.oss.ServeHTTP(w, r)
}

// isRPC tells an RPC call from an OSS REST call without consuming a body
// OSS may need: RPC carries Action in the query, the x-acs-action header, or
// (POST / with a form body) in the form.
func isRPC(r *http.Request) bool {
	if r.Header.Get("x-acs-action") != "" || r.URL.Query().Get("Action") != "" {
		return true
	}
	if r.URL.Path == "/" && r.Method == http.MethodPost &&
		strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		if err := r.ParseForm(); err == nil && r.PostForm.Get("Action") != "" {
			return true
		}
	}
	return false
}

// janitor releases instances whose AutoReleaseTime has passed.
func (s *Server) janitor() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		now := s.now()
		s.mu.RLock()
		expired := s.db.compute().HasExpired(now)
		s.mu.RUnlock()
		if !expired {
			continue
		}
		s.mu.Lock()
		emuecs.ReleaseExpired(s.adminCall(now))
		s.mu.Unlock()
		s.markDirty()
	}
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
