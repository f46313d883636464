package emulator

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth/credentials"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/intercept"
)

// A vendor SDK client given no endpoint, in HTTPS, reaches the emulator when the emulator is its
// HTTPS proxy and it trusts the interceptor's CA: how the Cluster Autoscaler, which cannot be given
// an endpoint, is pointed at it (gpucluster-emulator --intercept-ca-file). The Auto Scaling client
// resolves its endpoint itself (its table or the Location service at location.aliyuncs.com, both
// Alibaba Cloud host names), and its calls are answered by the emulator's state.
func TestInterceptedSDKReachesTheEmulator(t *testing.T) {
	e := newEnv(t, Config{})
	f := e.essGroup(0, 2, []string{"ecs.gn7i-c8g1.2xlarge"}, nil)

	i, err := intercept.New(e.s.Handler())
	must(t, err)
	proxySrv := httptest.NewServer(i)
	t.Cleanup(proxySrv.Close)
	proxy, err := url.Parse(proxySrv.URL)
	must(t, err)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(i.CAPEM())

	cfg := sdkConfig()
	cfg.Scheme = "HTTPS"
	cfg.HttpTransport = &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{RootCAs: roots}}
	c, err := ess.NewClientWithOptions(testRegion, cfg, credentials.NewAccessKeyCredential("emulator", "emulator-secret"))
	must(t, err)
	req := ess.CreateDescribeScalingGroupsRequest()
	req.RegionId = testRegion
	resp, err := c.DescribeScalingGroups(req)
	must(t, err)
	if len(resp.ScalingGroups.ScalingGroup) != 1 || resp.ScalingGroups.ScalingGroup[0].ScalingGroupId != f.group {
		t.Fatalf("through the interceptor: %+v, want the one group %s", resp.ScalingGroups.ScalingGroup, f.group)
	}
}
