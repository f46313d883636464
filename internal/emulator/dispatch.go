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
	emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"
	emuess "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ess"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/location"
	emuquotas "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/quotas"
	emuslb "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/slb"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/sts"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

const (
	versionECS = emuecs.Version
	versionVPC = emuvpc.Version
	versionNAS = "2017-06-26"
	versionSTS = sts.Version
	versionSLB = emuslb.Version
	versionESS = emuess.Version
	// versionQuotas is the Quota Center.
	versionQuotas = emuquotas.Version
	// versionLocation is the Location service, which SDKs ask for a product's endpoint.
	versionLocation = location.Version
)

var productHost = map[string]string{
	versionECS: "ecs.aliyuncs.com",
	versionVPC: "vpc.aliyuncs.com",
	versionNAS: "nas.aliyuncs.com",
	versionSTS: "sts.aliyuncs.com",
	versionSLB: "slb.aliyuncs.com",
	versionESS: "ess.aliyuncs.com",
	// The Quota Center has one central endpoint (its SDK's EndpointType "central"); this host is
	// the one the vendor's API reference gives for it, not re-read when it was added here.
	versionQuotas: "quotas.aliyuncs.com",
	// The host the Go SDK's location resolver sends DescribeEndpoints to (sdk/endpoints/location_resolver.go).
	versionLocation: "location-readonly.aliyuncs.com",
}

// serverEnv is the Server as the products see it (core.Env).
type serverEnv struct{ s *Server }

func (e serverEnv) NewID(prefix string) string { return e.s.db.newID(prefix) }
func (e serverEnv) NextSeq() uint64 {
	e.s.db.Seq++
	return e.s.db.Seq
}
func (e serverEnv) Seq() uint64                         { return e.s.db.Seq }
func (e serverEnv) ZoneExists(region, zone string) bool { return e.s.zoneExists(region, zone) }
func (e serverEnv) Regions() []core.Region              { return e.s.servedRegions() }
func (e serverEnv) AsyncStatus(since int64, now time.Time, pending, done string) string {
	return e.s.asyncStatus(since, now, pending, done)
}
func (e serverEnv) BootTime() time.Duration { return e.s.cfg.BootTime }
func (e serverEnv) KeyUser() string         { return e.s.cfg.KeyUser }

func paramsHash(p params) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		if !core.IsCommonParam(k) {
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
	body, status, aerr := s.answerRPC(sr, p, action, version, reqID, r.Host)
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

func (s *Server) answerRPC(sr core.SignedRequest, p params, action, version, reqID, host string) ([]byte, int, *apiError) {
	now := s.now()
	if action == "" {
		return nil, 0, errMissing("Action")
	}
	ak, aerr := s.authenticateRequest(sr, p, now)
	if aerr != nil {
		return nil, 0, aerr
	}
	rt, ok := core.Lookup(version + "/" + action)
	if !ok {
		if _, known := productHost[version]; !known {
			return nil, 0, errf(400, "InvalidVersion", "Specified parameter Version %q is not valid.", version)
		}
		return nil, 0, errf(404, "InvalidAction.NotFound", "Specified api %s is not found for version %s.", action, version)
	}
	if e := checkRanges(version+"/"+action, p); e != nil {
		return nil, 0, e
	}
	c := &core.Call{P: p, Action: action, Version: version, Now: now, ReqID: reqID, AK: ak, Host: host, Env: serverEnv{s}}
	if !rt.NoRegion {
		c.Region = p["RegionId"]
		if c.Region == "" && rt.RegionOptional {
			c.Region = s.defaultRegion
		}
		if c.Region == "" {
			return nil, 0, errMissing("RegionId")
		}
		if s.regions[c.Region] == nil {
			return nil, 0, errf(404, "InvalidRegionId.NotFound", "The specified region %q does not exist.", c.Region)
		}
	}
	token := p["ClientToken"]
	useIdem := rt.Idem && token != ""
	if !rt.Write {
		// Reads: build the answer under the read lock, encode it after. The answer is made of
		// fresh SDK structs, and encoding a hundred instances takes longer than finding them:
		// holding the lock for it would queue every writer (and, behind a queued writer, every
		// reader) for the whole encode.
		s.mu.RLock()
		c.Stores = s.db.stores
		resp, aerr := rt.Fn(c)
		s.mu.RUnlock()
		if aerr != nil {
			return nil, 0, aerr
		}
		body, err := encodeAnswer(rt, resp)
		if err != nil {
			return nil, 0, errf(500, "InternalError", "marshal: %v", err)
		}
		if !rt.VendorModel {
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
	c.Stores = s.db.stores
	resp, aerr := rt.Fn(c)
	if aerr != nil {
		return nil, 0, aerr
	}
	body, err := encodeAnswer(rt, resp)
	if err != nil {
		return nil, 0, errf(500, "InternalError", "marshal: %v", err)
	}
	if !rt.VendorModel {
		body = s.prune(version+"/"+action, body)
	}
	if useIdem {
		s.db.Idem[idemKey] = &idemEntry{Hash: hash, Body: body, At: now.Unix()}
	}
	s.markDirty()
	return body, 200, nil
}

// encodeAnswer writes a handler's answer as JSON, with every list it left nil as [] (see
// core.EmptyLists). VendorModel answers are alibabacloud-go models, whose omitempty leaves an
// empty list out either way, so they skip the walk.
func encodeAnswer(rt core.Route, resp any) ([]byte, error) {
	if !rt.VendorModel {
		core.EmptyLists(resp)
	}
	return json.Marshal(resp)
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
func ServedActions() []string { return core.Served() }
