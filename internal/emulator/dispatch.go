package emulator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuess "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ess"
	emuslb "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/slb"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/sts"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

// call is one RPC request being answered.
type call struct {
	s       *Server
	p       params
	action  string
	version string
	region  string
	now     time.Time
	reqID   string
	ak      string
	core    *core.Call // built on first use by Core
}

type handlerFunc func(c *call) (any, *apiError)

// route describes one Action: write routes take the exclusive lock, and
// idem routes honour ClientToken.
type route struct {
	fn       handlerFunc
	write    bool
	idem     bool
	noRegion bool // region-less actions (DescribeRegions, AssumeRole)
	// regionOptional actions do not require RegionId in the vendor's models (the endpoint names
	// the region); without one the emulator answers for its first region.
	regionOptional bool
	// vendorModel answers are built from the vendor's current response model already and skip
	// pruneAnswer.
	vendorModel bool
}

const (
	versionECS = "2014-05-26"
	versionVPC = emuvpc.Version
	versionNAS = "2017-06-26"
	versionSTS = sts.Version
	versionSLB = emuslb.Version
	versionESS = emuess.Version
)

var productHost = map[string]string{
	versionECS: "ecs.aliyuncs.com",
	versionVPC: "vpc.aliyuncs.com",
	versionNAS: "nas.aliyuncs.com",
	versionSTS: "sts.aliyuncs.com",
	versionSLB: "slb.aliyuncs.com",
	versionESS: "ess.aliyuncs.com",
}

// routes maps "Version/Action" to its handler for the products still in this package; filled
// by each product file's init. The products in their own package register with core.Register.
var routes = map[string]route{}

func register(version, action string, r route) { routes[version+"/"+action] = r }

// lookupRoute finds the route of "Version/Action", in this package's table or the core's.
func lookupRoute(key string) (route, bool) {
	if r, ok := routes[key]; ok {
		return r, true
	}
	r, ok := core.Lookup(key)
	if !ok {
		return route{}, false
	}
	return route{fn: func(c *call) (any, *apiError) { return r.Fn(c.Core()) }, write: r.Write, idem: r.Idem,
		noRegion: r.NoRegion, regionOptional: r.RegionOptional, vendorModel: r.VendorModel}, true
}

// Core is the call as a product package's handler (and the core's tag engine) takes it.
func (c *call) Core() *core.Call {
	if c.core == nil {
		c.core = &core.Call{P: c.p, Action: c.action, Version: c.version, Region: c.region, Now: c.now,
			ReqID: c.reqID, AK: c.ak, Stores: c.s.db.stores, Env: serverEnv{c.s}}
	}
	return c.core
}

// serverEnv is the Server as the products in their own packages see it (core.Env).
type serverEnv struct{ s *Server }

func (e serverEnv) NewID(prefix string) string { return e.s.db.newID(prefix) }
func (e serverEnv) NextSeq() uint64 {
	e.s.db.Seq++
	return e.s.db.Seq
}
func (e serverEnv) Seq() uint64                         { return e.s.db.Seq }
func (e serverEnv) ZoneExists(region, zone string) bool { return e.s.zoneExists(region, zone) }
func (e serverEnv) AsyncStatus(since int64, now time.Time, pending, done string) string {
	return e.s.asyncStatus(since, now, pending, done)
}
func (e serverEnv) BootTime() time.Duration { return e.s.cfg.BootTime }

// commonParams are left out of the idempotency hash: they change on every retry.
var commonParams = map[string]bool{
	"Signature": true, "SignatureNonce": true, "Timestamp": true, "AccessKeyId": true,
	"SecurityToken": true, "SignatureMethod": true, "SignatureVersion": true,
	"SignatureType": true, "Format": true, "ClientToken": true,
}

func paramsHash(p params) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		if !commonParams[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		_, _ = fmt.Fprintf(h, "%s=%s\n", k, p[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (s *Server) serveRPC(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	reqID := newRequestID()
	sr := core.SignedRequest{Method: r.Method}
	if core.IsV3(r) {
		v3, aerr := core.ReadV3(r) // before ParseForm, which consumes the body the signature covers
		if aerr != nil {
			writeAPIError(w, aerr, reqID, r.Host)
			return
		}
		sr.V3 = v3
	}
	if err := r.ParseForm(); err != nil {
		writeAPIError(w, errf(400, "InvalidParameter", "cannot parse the request: %v", err), reqID, r.Host)
		return
	}
	p := make(params, len(r.Form))
	for k, v := range r.Form {
		if len(v) > 0 {
			p[k] = v[0]
		}
	}
	action := p["Action"]
	if action == "" {
		action = r.Header.Get("x-acs-action")
		p["Action"] = action
	}
	version := p["Version"]
	if version == "" {
		version = r.Header.Get("x-acs-version")
		p["Version"] = version
	}
	host := productHost[version]
	if host == "" {
		host = r.Host
	}
	asXML := wantsXML(p)
	if s.applyFaults(w, r, action, asXML) {
		return
	}
	body, status, aerr := s.answerRPC(sr, p, action, version, reqID)
	contentType := "application/json;charset=utf-8"
	if aerr == nil && asXML {
		// Answers are built and cached (idempotency) as JSON; XML is rendered from that.
		if body, aerr = jsonToXMLAnswer(action, body); aerr == nil {
			contentType = "text/xml;charset=utf-8"
		}
	}
	code := ""
	switch {
	case aerr != nil && asXML:
		code = aerr.Code
		writeAPIErrorXML(w, aerr, reqID, host)
	case aerr != nil:
		code = aerr.Code
		writeAPIError(w, aerr, reqID, host)
	default:
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
	s.stats.record(action, code)
	s.stats.served(time.Since(start))
	if s.cfg.Logf != nil {
		// Parameters are not logged: they carry signatures, tokens and user data.
		s.cfg.Logf("rpc %s %s region=%s -> %s (%s)", version, action, p["RegionId"], orOK(code), time.Since(start).Round(time.Microsecond))
	}
}

func orOK(code string) string {
	if code == "" {
		return "OK"
	}
	return code
}

func (s *Server) answerRPC(sr core.SignedRequest, p params, action, version, reqID string) ([]byte, int, *apiError) {
	now := s.now()
	if action == "" {
		return nil, 0, errMissing("Action")
	}
	ak, aerr := s.authenticateRequest(sr, p, now)
	if aerr != nil {
		return nil, 0, aerr
	}
	rt, ok := lookupRoute(version + "/" + action)
	if !ok {
		if _, known := productHost[version]; !known {
			return nil, 0, errf(400, "InvalidVersion", "Specified parameter Version %q is not valid.", version)
		}
		return nil, 0, errf(404, "InvalidAction.NotFound", "Specified api %s is not found for version %s.", action, version)
	}
	if e := checkRanges(version+"/"+action, p); e != nil {
		return nil, 0, e
	}
	c := &call{s: s, p: p, action: action, version: version, now: now, reqID: reqID, ak: ak}
	if !rt.noRegion {
		c.region = p["RegionId"]
		if c.region == "" && rt.regionOptional {
			c.region = s.defaultRegion
		}
		if c.region == "" {
			return nil, 0, errMissing("RegionId")
		}
		if s.regions[c.region] == nil {
			return nil, 0, errf(404, "InvalidRegionId.NotFound", "The specified region %q does not exist.", c.region)
		}
	}
	token := p["ClientToken"]
	useIdem := rt.idem && token != ""
	if !rt.write {
		// Reads: build the answer under the read lock, encode it after. The answer is made of
		// fresh SDK structs, and encoding a hundred instances takes longer than finding them:
		// holding the lock for it would queue every writer (and, behind a queued writer, every
		// reader) for the whole encode.
		s.mu.RLock()
		resp, aerr := rt.fn(c)
		s.mu.RUnlock()
		if aerr != nil {
			return nil, 0, aerr
		}
		body, err := json.Marshal(resp)
		if err != nil {
			return nil, 0, errf(500, "InternalError", "marshal: %v", err)
		}
		if !rt.vendorModel {
			body = s.prune(version+"/"+action, body)
		}
		return body, 200, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var idemKey, hash string
	if useIdem {
		idemKey = ak + "|" + version + "|" + action + "|" + token
		hash = paramsHash(p)
		if e := s.db.Idem[idemKey]; e != nil {
			if e.Hash != hash {
				return nil, 0, errf(400, "IdempotentParameterMismatch", "The request uses the same client token as a previous, but non-identical request.")
			}
			return e.Body, 200, nil
		}
	}
	resp, aerr := rt.fn(c)
	if aerr != nil {
		return nil, 0, aerr
	}
	body, err := json.Marshal(resp)
	if err != nil {
		return nil, 0, errf(500, "InternalError", "marshal: %v", err)
	}
	if !rt.vendorModel {
		body = s.prune(version+"/"+action, body)
	}
	if useIdem {
		s.db.Idem[idemKey] = &idemEntry{Hash: hash, Body: body, At: now.Unix()}
	}
	s.markDirty()
	return body, 200, nil
}

func jsonToXMLAnswer(action string, body []byte) ([]byte, *apiError) {
	out, err := jsonToXML(action+"Response", body)
	if err != nil {
		return nil, errf(500, "InternalError", "rendering the answer as XML: %v", err)
	}
	return out, nil
}

// ServedActions lists every RPC action the emulator answers as "Version/Action", sorted; the
// conformance generator and suite walk it so a new action cannot be left out.
func ServedActions() []string {
	out := core.Served()
	for k := range routes {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
