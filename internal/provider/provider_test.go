package provider_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/sts"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

const zonesConfig = `
data "gpucluster_zones" "all" {}
`

// zonesChecks asserts that the zones data source read the emulator's zones for the region.
var zonesChecks = []statecheck.StateCheck{
	statecheck.ExpectKnownValue("data.gpucluster_zones.all", tfjsonpath.New("region"), knownvalue.StringExact(acctest.Region)),
	statecheck.ExpectKnownValue("data.gpucluster_zones.all", tfjsonpath.New("ids").AtSliceIndex(0), knownvalue.StringExact(acctest.Region+"-a")),
	statecheck.ExpectKnownValue("data.gpucluster_zones.all", tfjsonpath.New("ids"), knownvalue.ListSizeExact(3)),
}

func TestAccProvider_goodCredentials(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config:            emu.Config() + zonesConfig,
			ConfigStateChecks: zonesChecks,
		}},
	})
	if got := emu.Stats().Calls["DescribeZones"]; got < 1 {
		t.Fatalf("the emulator saw %d DescribeZones calls; the data source did not go through the API", got)
	}
}

func TestAccProvider_wrongSecret(t *testing.T) {
	emu := acctest.StartEmulator(t)
	const wrongSecret = "not-the-emulator-secret-4711"
	logFile := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "TRACE")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	// The secret comes from the environment: written into the configuration, the testing
	// framework's own trace of the configuration would carry it, proving nothing about us.
	t.Setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", acctest.AccessKey)
	t.Setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", wrongSecret)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: envCredentialsProvider(emu.URL, "max_retries = 1") + zonesConfig,
			// Plain words: the signature was rejected, and which access key made it.
			ExpectError: regexp.MustCompile(`(?s)SignatureDoesNotMatch.*rejected the request\s+signature made with access\s+key "emulator"`),
		}},
	})
	assertFileLacks(t, logFile, wrongSecret)
}

func TestAccProvider_unreachableEndpoint(t *testing.T) {
	// A port that was free a moment ago: nothing listens, so every dial is refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	_ = ln.Close()

	// The bound this test states: 2 transport retries with at most 2 s backoff each, around
	// OpenTofu's own start-up, fit well inside 60 s. Retrying forever would blow through it.
	const bound = 60 * time.Second
	start := time.Now()
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config:      acctest.ProviderBlock(dead, acctest.AccessKey, acctest.SecretKey, "max_retries = 2") + zonesConfig,
			ExpectError: regexp.MustCompile(`(?s)no answer from the\s+service.*connection\s+refused`),
		}},
	})
	if took := time.Since(start); took > bound {
		t.Fatalf("giving up on an unreachable endpoint took %s, more than the %s the retry bound allows", took, bound)
	}
}

func TestAccProvider_throttledFirstCallsStillSucceed(t *testing.T) {
	emu := acctest.StartEmulator(t)
	target, _ := url.Parse(emu.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)

	// The front answers the first three API calls the way the service throttles, then steps aside.
	const throttled = 3
	var seen atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/_emulator/") || seen.Add(1) > throttled {
			proxy.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"RequestId":"THROTTLE-%d","HostId":"ecs.aliyuncs.com","Code":"Throttling.User","Message":"Request was denied due to user flow control.","Recommend":""}`, seen.Load())
	}))
	t.Cleanup(front.Close)

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config:            acctest.ProviderBlock(front.URL, acctest.AccessKey, acctest.SecretKey, "max_retries = 5") + zonesConfig,
			ConfigStateChecks: zonesChecks,
		}},
	})
	if got := seen.Load(); got <= throttled {
		t.Fatalf("the front saw %d calls; want more than the %d it throttled (the provider must retry)", got, throttled)
	}
}

func TestAccProvider_traceLogCarriesNoSecrets(t *testing.T) {
	emu := acctest.StartEmulator(t)

	// Temporary credentials from the emulator's STS, so there is a security token to leak.
	stsClient, err := sts.NewClientWithAccessKey(acctest.Region, acctest.AccessKey, acctest.SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(emu.URL)
	stsClient.Domain = u.Host
	stsClient.GetConfig().Scheme = "HTTP"
	req := sts.CreateAssumeRoleRequest()
	req.RoleArn = "acs:ram::1234567890:role/gpu-research"
	req.RoleSessionName = "acctest"
	out, err := stsClient.AssumeRole(req)
	if err != nil {
		t.Fatalf("AssumeRole on the emulator: %v", err)
	}
	creds := out.Credentials
	if creds.SecurityToken == "" || creds.AccessKeySecret == "" {
		t.Fatalf("AssumeRole returned no token or secret: %+v", out.RequestId)
	}

	logFile := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "TRACE")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	// From the environment, as CI systems hand them out; see TestAccProvider_wrongSecret for why.
	t.Setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", creds.AccessKeyId)
	t.Setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", creds.AccessKeySecret)
	t.Setenv("ALIBABA_CLOUD_SECURITY_TOKEN", creds.SecurityToken)
	config := envCredentialsProvider(emu.URL) + zonesConfig

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps:                    []resource.TestStep{{Config: config, ConfigStateChecks: zonesChecks}},
	})

	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatalf("reading the captured log: %v", err)
	}
	// The log must be the real thing: the provider's own API-call lines are in it.
	if !strings.Contains(string(data), "alibaba cloud API call") || !strings.Contains(string(data), "DescribeZones") {
		t.Fatalf("the captured TRACE log (%d bytes) lacks the provider's API-call lines; the test would prove nothing", len(data))
	}
	for name, secret := range map[string]string{"secret key": creds.AccessKeySecret, "security token": creds.SecurityToken, "emulator secret": acctest.SecretKey} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the TRACE log contains the %s", name)
		}
	}
}

func TestAccProvider_validateTimeErrors(t *testing.T) {
	tests := map[string]struct {
		config string
		want   string
	}{
		"malformed region": {
			config: `provider "gpucluster" {
  region     = "CN_Wulanchabu!"
  access_key = "a"
  secret_key = "b"
}`,
			want: `(?s)region.*must be an Alibaba Cloud region id`,
		},
		"endpoint that is not http(s)": {
			config: `provider "gpucluster" {
  region     = "cn-wulanchabu"
  endpoint   = "ftp://127.0.0.1:21"
  access_key = "a"
  secret_key = "b"
}`,
			want: `(?s)Invalid endpoint URL.*must start with http:// or https://`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
				Steps: []resource.TestStep{{
					Config:      tc.config + zonesConfig,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}

func TestAccProvider_noCredentialsAnywhere(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, v := range []string{"ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ALIBABA_CLOUD_SECURITY_TOKEN", "ALIBABA_CLOUD_PROFILE"} {
		t.Setenv(v, "")
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config:      `provider "gpucluster" { region = "cn-wulanchabu" }` + zonesConfig,
			ExpectError: regexp.MustCompile(`(?s)no Alibaba Cloud credentials.*three\s+ways.*ALIBABA_CLOUD_ACCESS_KEY_ID.*config.json`),
		}},
	})
}

// envCredentialsProvider is a provider block that leaves credentials to the environment.
func envCredentialsProvider(endpoint string, extra ...string) string {
	s := fmt.Sprintf("provider \"gpucluster\" {\n  region   = %q\n  endpoint = %q\n", acctest.Region, endpoint)
	for _, line := range extra {
		s += "  " + line + "\n"
	}
	return s + "}\n"
}

func assertFileLacks(t *testing.T, path, secret string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	if len(data) == 0 {
		t.Fatalf("%s is empty: the log capture did not work, so the check would prove nothing", path)
	}
	if strings.Contains(string(data), secret) {
		t.Fatalf("%s contains the secret", path)
	}
}

// TestAccProvider_ramRoleProfile reads a RamRoleArn profile from ~/.aliyun/config.json in a
// temporary HOME: the provider exchanges the profile's key for temporary credentials through STS
// AssumeRole (against the emulator's STS), then signs every call with those.
func TestAccProvider_ramRoleProfile(t *testing.T) {
	emu := acctest.StartEmulator(t)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".aliyun"), 0o700); err != nil {
		t.Fatal(err)
	}
	profile := fmt.Sprintf(`{"current": "lab", "profiles": [
  {"name": "lab", "mode": "RamRoleArn", "access_key_id": %q, "access_key_secret": %q,
   "ram_role_arn": "acs:ram::1234567890:role/gpu-research", "ram_session_name": "acctest", "region_id": %q}
]}`, acctest.AccessKey, acctest.SecretKey, acctest.Region)
	if err := os.WriteFile(filepath.Join(home, ".aliyun", "config.json"), []byte(profile), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	for _, v := range []string{"ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ALIBABA_CLOUD_SECURITY_TOKEN", "ALIBABA_CLOUD_PROFILE", "ALIBABA_CLOUD_REGION"} {
		t.Setenv(v, "")
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			// No region, no credentials in the block: both come from the profile.
			Config:            fmt.Sprintf("provider \"gpucluster\" {\n  endpoint = %q\n}\n", emu.URL) + zonesConfig,
			ConfigStateChecks: zonesChecks,
		}},
	})
	stats := emu.Stats()
	if stats.Calls["AssumeRole"] < 1 {
		t.Fatalf("the provider never called AssumeRole (calls: %v): the RamRoleArn profile was not honoured", stats.Calls)
	}
}
