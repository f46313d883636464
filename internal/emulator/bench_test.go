package emulator

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// populate creates n instances through RunInstances (100 per call) and
// returns their ids.
func populate(b *testing.B, e *env, n int) []string {
	b.Helper()
	f := e.network("10.0.0.0/8", "10.0.0.0/16")
	var ids []string
	vsw := f.vswID
	for len(ids) < n {
		if len(ids)%60000 == 0 && len(ids) > 0 {
			// A /16 holds 65,530 addresses: open another vSwitch.
			cs := vpc.CreateCreateVSwitchRequest()
			cs.RegionId, cs.VpcId, cs.ZoneId = testRegion, f.vpcID, testRegion+"-b"
			cs.CidrBlock = fmt.Sprintf("10.%d.0.0/16", len(ids)/60000)
			sw, err := e.vpc.CreateVSwitch(cs)
			must(b, err)
			vsw = sw.VSwitchId
		}
		f.vswID = vsw
		r := e.runReq(f, "ecs.gn6i-c4g1.xlarge", 100)
		r.Tag = &[]ecs.RunInstancesTag{{Key: "cluster", Value: "bench"}, {Key: "batch", Value: fmt.Sprint(len(ids) / 100)}}
		resp, err := e.ecs.RunInstances(r)
		must(b, err)
		ids = append(ids, resp.InstanceIdSets.InstanceIdSet...)
	}
	return ids
}

// BenchmarkDescribeInstances100 measures DescribeInstances of 100 instances
// by id, with 10,000 stored, through HTTP with signatures checked and the
// answer decoded by the real SDK client. Target: >= 500 calls/s on 2 cores.
func BenchmarkDescribeInstances100(b *testing.B) {
	e := newEnv(b, Config{BootTime: 1})
	ids := populate(b, e, 10000)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		// One SDK client per goroutine: the SDK client is not safe for concurrent use.
		ec, _, _, _ := e.clients(nil)
		i := 0
		for pb.Next() {
			start := (i * 100) % len(ids)
			i++
			r := ecs.CreateDescribeInstancesRequest()
			r.RegionId = testRegion
			r.InstanceIds = jsonIDs(ids[start : start+100])
			r.MaxResults = requests.NewInteger(100)
			resp, err := ec.DescribeInstances(r)
			if err != nil {
				b.Error(err)
				return
			}
			if len(resp.Instances.Instance) != 100 {
				b.Errorf("got %d instances", len(resp.Instances.Instance))
				return
			}
		}
	})
	rate := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "calls/s")
	b.Logf("DescribeInstances(100 of 10,000): %d calls, %.0f calls/s", b.N, rate)
}

// BenchmarkDescribeInstancesByTag pages a 100-instance tag selection out of
// 10,000 through the tag index.
func BenchmarkDescribeInstancesByTag(b *testing.B) {
	e := newEnv(b, Config{BootTime: 1})
	populate(b, e, 10000)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ec, _, _, _ := e.clients(nil)
		i := 0
		for pb.Next() {
			r := ecs.CreateDescribeInstancesRequest()
			r.RegionId = testRegion
			r.Tag = &[]ecs.DescribeInstancesTag{{Key: "batch", Value: fmt.Sprint(i % 100)}}
			r.MaxResults = requests.NewInteger(100)
			i++
			resp, err := ec.DescribeInstances(r)
			if err != nil || len(resp.Instances.Instance) != 100 {
				b.Errorf("%v %v", err, resp)
				return
			}
		}
	})
	rate := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "calls/s")
	b.Logf("DescribeInstances(tag, 100 of 10,000): %d calls, %.0f calls/s", b.N, rate)
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkMemory100k stores 100,000 instances (created through RunInstances
// over HTTP) and reports the heap they take. Target: < 500 MB.
func BenchmarkMemory100k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		before := heapInUse()
		e := newEnv(b, Config{BootTime: 1})
		populate(b, e, 100000)
		after := heapInUse()
		mb := float64(after-before) / (1 << 20)
		b.ReportMetric(mb, "MB-heap/100k-instances")
		b.ReportMetric(float64(after-before)/100000, "B/instance")
		b.Logf("100,000 instances: heap %.1f MB (%.0f bytes per instance)", mb, float64(after-before)/100000)
		if n := len(e.s.db.compute().Instances); n != 100000 {
			b.Fatalf("stored %d", n)
		}
		runtime.KeepAlive(e)
	}
}

// signedQuery builds a signed RPC query string the way the SDK does (the
// SDK-driven tests prove signV1/stringToSign match the SDK's signer).
func signedQuery(method string, p params, ak, secret string) string {
	p["Format"], p["SignatureMethod"], p["SignatureVersion"], p["SignatureType"] = "JSON", "HMAC-SHA1", "1.0", ""
	p["AccessKeyId"] = ak
	p["Timestamp"] = time.Now().UTC().Format("2006-01-02T15:04:05Z")
	p["SignatureNonce"] = newRequestID()
	p["Signature"] = core.SignV1(core.StringToSign(method, p), secret)
	v := url.Values{}
	for k, x := range p {
		v.Set(k, x)
	}
	return v.Encode()
}

// BenchmarkDescribeInstances100Server measures the emulator's own serving
// rate: the same call over HTTP with a fresh signature and nonce each time,
// checked by the server, but with a light client that reads the body
// instead of the SDK's reflection-heavy decoder (which alone costs several
// ms per 100-instance answer and would measure the client, not the server).
func BenchmarkDescribeInstances100Server(b *testing.B) {
	e := newEnv(b, Config{BootTime: 1})
	ids := populate(b, e, 10000)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			start := (i * 100) % len(ids)
			i++
			q := signedQuery("POST", params{"Action": "DescribeInstances", "Version": versionECS, "RegionId": testRegion,
				"InstanceIds": jsonIDs(ids[start : start+100]), "MaxResults": "100"}, "emulator", "emulator-secret")
			resp, err := client.Post(e.srv.URL+"/?"+q, "application/x-www-form-urlencoded", nil)
			if err != nil {
				b.Error(err)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"TotalCount":100`)) {
				b.Errorf("status %d: %.300s", resp.StatusCode, body)
				return
			}
		}
	})
	rate := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "calls/s")
	b.Logf("server: DescribeInstances(100 of 10,000): %d calls, %.0f calls/s", b.N, rate)
}
