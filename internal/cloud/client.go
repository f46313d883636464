package cloud

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth"
	sdkcredentials "github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth/credentials"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/responses"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/nas"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/quotas"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/slb"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/sts"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
	osscredentials "github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss/credentials"
	ossretry "github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss/retry"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// Products, as they name themselves in requests and in endpoint overrides.
const (
	ProductECS = "ecs"
	ProductVPC = "vpc"
	ProductNAS = "nas"
	ProductOSS = "oss"
	ProductSTS = "sts"
	// ProductSLB is the Classic Load Balancer (CLB, API 2014-05-15), named by its SDK "slb".
	ProductSLB = "slb"
	// ProductESS is Auto Scaling (API 2014-08-28), named by its SDK "ess".
	ProductESS = "ess"
	// ProductQuotas is the Quota Center (API 2020-05-10), named by its SDK "quotas".
	ProductQuotas = "quotas"
)

// Products lists every product the client talks to, in a stable order.
var Products = []string{ProductECS, ProductVPC, ProductNAS, ProductOSS, ProductSTS, ProductSLB, ProductESS, ProductQuotas}

// Config is everything the client is built from; the provider fills it from its block.
type Config struct {
	Region      string
	Credentials Credentials
	// Endpoint is one base URL for every product ("http://127.0.0.1:18686" for the emulator).
	Endpoint string
	// Endpoints overrides Endpoint per product (keys from Products).
	Endpoints map[string]string
	// MaxRetries bounds both the transport's retries of unanswered requests and the API-level
	// retries of "try again" error codes.
	MaxRetries int
	// RateLimit is the client-side ceiling on requests per second, shared by all resources.
	RateLimit float64
	// UserAgent names the provider and its version; it is appended to the SDKs' own.
	UserAgent string
}

// Default retry figures when the provider block leaves them out.
const (
	DefaultMaxRetries = 8
	DefaultRateLimit  = 20
)

// API-level backoff bounds for retryable error codes.
var (
	apiWaitMin = 200 * time.Millisecond
	apiWaitMax = 8 * time.Second
)

// Client is the one API client built in the provider's Configure and handed to every resource.
// It is safe for concurrent use.
type Client struct {
	region      string
	accessKeyID string
	maxRetries  int
	rateLimit   float64
	transport   *transport

	// The RPC SDK's clients write to shared fields on every call (timeouts), so one client must
	// not serve two calls at once; each product keeps a pool instead.
	pools map[string]*sync.Pool
	oss   *oss.Client
}

// Region is the region every call goes to.
func (c *Client) Region() string { return c.region }

// RateLimit is the client-side ceiling on requests per second it was built with; 0 or less is
// none.
func (c *Client) RateLimit() float64 { return c.rateLimit }

// AccessKeyID is the key requests are signed with, for diagnostics. Never the secret.
func (c *Client) AccessKeyID() string { return c.accessKeyID }

// ParseEndpoint checks that raw is an http(s) URL with a host, and returns scheme and host.
func ParseEndpoint(raw string) (scheme, host string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("%q is not a URL: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", "", fmt.Errorf("%q must start with http:// or https://", raw)
	}
	if u.Host == "" {
		return "", "", fmt.Errorf("%q has no host", raw)
	}
	return u.Scheme, u.Host, nil
}

// endpointFor returns the override for a product, or "" to let the SDK pick the public endpoint.
func (cfg Config) endpointFor(product string) string {
	if e := cfg.Endpoints[product]; e != "" {
		return e
	}
	return cfg.Endpoint
}

// New builds the client. With a RAM role to assume, it calls STS once, here, so that a broken
// role shows up at Configure time and not in the middle of an apply.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.Region == "" {
		return nil, errors.New("no region: set region in the provider block or ALIBABA_CLOUD_REGION")
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	for _, p := range Products {
		if e := cfg.endpointFor(p); e != "" {
			if _, _, err := ParseEndpoint(e); err != nil {
				return nil, fmt.Errorf("endpoint for %s: %w", p, err)
			}
		}
	}
	c := &Client{
		region:      cfg.Region,
		accessKeyID: cfg.Credentials.AccessKeyID,
		maxRetries:  cfg.MaxRetries,
		rateLimit:   cfg.RateLimit,
		transport:   newTransport(cfg.MaxRetries, cfg.RateLimit),
	}
	creds := cfg.Credentials
	c.buildPools(cfg, creds)
	if creds.RoleArn != "" {
		assumed, err := c.assumeRole(ctx, creds)
		if err != nil {
			return nil, err
		}
		creds = assumed
		c.buildPools(cfg, creds)
	}
	ossClient, err := newOSSClient(cfg, creds, c.transport)
	if err != nil {
		return nil, err
	}
	c.oss = ossClient
	return c, nil
}

func (c *Client) buildPools(cfg Config, creds Credentials) {
	c.pools = map[string]*sync.Pool{}
	for _, product := range []string{ProductECS, ProductVPC, ProductNAS, ProductSTS, ProductSLB, ProductESS, ProductQuotas} {
		c.pools[product] = &sync.Pool{New: func() any {
			client, err := newRPCClient(product, cfg, creds, c.transport)
			if err != nil {
				return err
			}
			return client
		}}
	}
}

// rpcDoer is what every RPC SDK client has in common.
type rpcDoer interface {
	DoAction(request requests.AcsRequest, response responses.AcsResponse) error
}

func newRPCClient(product string, cfg Config, creds Credentials, tr http.RoundTripper) (rpcDoer, error) {
	sdkCfg := sdk.NewConfig()
	sdkCfg.Transport = tr
	sdkCfg.AutoRetry = false // retries belong to the transport and the call layer
	sdkCfg.Scheme = "HTTPS"
	var credential auth.Credential = sdkcredentials.NewAccessKeyCredential(creds.AccessKeyID, creds.AccessKeySecret)
	if creds.SecurityToken != "" {
		credential = sdkcredentials.NewStsTokenCredential(creds.AccessKeyID, creds.AccessKeySecret, creds.SecurityToken)
	}
	var domain string
	if e := cfg.endpointFor(product); e != "" {
		scheme, host, err := ParseEndpoint(e)
		if err != nil {
			return nil, err
		}
		sdkCfg.Scheme = strings.ToUpper(scheme)
		domain = host
	}

	var (
		client rpcDoer
		base   *sdk.Client
		err    error
	)
	switch product {
	case ProductECS:
		var cl *ecs.Client
		cl, err = ecs.NewClientWithOptions(cfg.Region, sdkCfg, credential)
		client, base = cl, &cl.Client
	case ProductVPC:
		var cl *vpc.Client
		cl, err = vpc.NewClientWithOptions(cfg.Region, sdkCfg, credential)
		client, base = cl, &cl.Client
	case ProductNAS:
		var cl *nas.Client
		cl, err = nas.NewClientWithOptions(cfg.Region, sdkCfg, credential)
		client, base = cl, &cl.Client
	case ProductSLB:
		var cl *slb.Client
		cl, err = slb.NewClientWithOptions(cfg.Region, sdkCfg, credential)
		client, base = cl, &cl.Client
	case ProductESS:
		var cl *ess.Client
		cl, err = ess.NewClientWithOptions(cfg.Region, sdkCfg, credential)
		client, base = cl, &cl.Client
	case ProductQuotas:
		var cl *quotas.Client
		cl, err = quotas.NewClientWithOptions(cfg.Region, sdkCfg, credential)
		client, base = cl, &cl.Client
		if domain == "" {
			// The SDK has no endpoint table for the Quota Center (its EndpointMap is empty and
			// its type "central"): name the central endpoint instead of asking Location for it.
			domain = quotaCenterDomain
		}
	case ProductSTS:
		var cl *sts.Client
		cl, err = sts.NewClientWithOptions(cfg.Region, sdkCfg, credential)
		client, base = cl, &cl.Client
	default:
		return nil, fmt.Errorf("unknown product %q", product)
	}
	if err != nil {
		return nil, fmt.Errorf("building the %s client: %w", product, err)
	}
	base.Domain = domain
	// The call's context bounds the time; the SDK's own 10 s read timeout would cut a slow but
	// healthy call (a big DescribeInstances under latency) short.
	base.SetReadTimeout(5 * time.Minute)
	base.SetConnectTimeout(10 * time.Second)
	if cfg.UserAgent != "" {
		name, version, _ := strings.Cut(cfg.UserAgent, "/")
		base.AppendUserAgent(name, version)
	}
	return client, nil
}

func newOSSClient(cfg Config, creds Credentials, tr http.RoundTripper) (*oss.Client, error) {
	ossCfg := oss.LoadDefaultConfig().
		WithRegion(cfg.Region).
		WithCredentialsProvider(osscredentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.AccessKeySecret, creds.SecurityToken)).
		WithHttpClient(&http.Client{Transport: tr}).
		WithRetryer(ossretry.NopRetryer{})
	if e := cfg.endpointFor(ProductOSS); e != "" {
		ossCfg = ossCfg.WithEndpoint(e).WithUsePathStyle(true)
		if scheme, _, _ := ParseEndpoint(e); scheme == "http" {
			ossCfg = ossCfg.WithDisableSSL(true)
		}
	}
	if cfg.UserAgent != "" {
		ossCfg = ossCfg.WithUserAgent(cfg.UserAgent)
	}
	return oss.NewClient(ossCfg), nil
}

func (c *Client) assumeRole(ctx context.Context, creds Credentials) (Credentials, error) {
	req := sts.CreateAssumeRoleRequest()
	req.RoleArn = creds.RoleArn
	req.RoleSessionName = creds.RoleSessionName
	if creds.DurationSeconds > 0 {
		req.DurationSeconds = requests.NewInteger(creds.DurationSeconds)
	}
	resp := sts.CreateAssumeRoleResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return Credentials{}, fmt.Errorf("assuming RAM role %s (from %s): %w", creds.RoleArn, creds.Source, err)
	}
	return Credentials{
		AccessKeyID:     resp.Credentials.AccessKeyId,
		AccessKeySecret: resp.Credentials.AccessKeySecret,
		SecurityToken:   resp.Credentials.SecurityToken,
		Region:          creds.Region,
		Source:          creds.Source + " via AssumeRole",
	}, nil
}

// CallOption adjusts one call.
type CallOption func(*callOptions)

type callOptions struct{ retryCodes []string }

// RetryOn adds error codes that mean "try again" for this call only (say
// DependencyViolation while a VPC's dependents drain).
func RetryOn(codes ...string) CallOption {
	return func(o *callOptions) { o.retryCodes = append(o.retryCodes, codes...) }
}

// Call sends one RPC request (ECS, VPC, NAS, SLB, ESS or STS, chosen by the request's product) and decodes
// the answer into resp. It retries "try again" codes with backoff, honours ctx, and logs every
// attempt at DEBUG: action, request id, attempt, duration and error code, and never a credential.
func (c *Client) Call(ctx context.Context, req requests.AcsRequest, resp responses.AcsResponse, opts ...CallOption) error {
	var o callOptions
	for _, opt := range opts {
		opt(&o)
	}
	product := strings.ToLower(req.GetProduct())
	pool, ok := c.pools[product]
	if !ok {
		return fmt.Errorf("no client for product %q", req.GetProduct())
	}
	action := req.GetActionName()

	id, release := c.transport.bind(ctx)
	defer release()
	req.GetHeaders()[callIDHeader] = id

	for attempt := 1; ; attempt++ {
		got := pool.Get()
		if err, isErr := got.(error); isErr {
			return err
		}
		doer := got.(rpcDoer)
		start := time.Now()
		err := fromSDKError(product, action, c.accessKeyID, doer.DoAction(req, resp))
		pool.Put(doer)
		logAttempt(ctx, product, action, attempt, time.Since(start), requestIDOf(resp), err)

		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", product, action, ctx.Err())
		}
		if attempt > c.maxRetries || !isRetryableCode(ErrorCode(err), o.retryCodes) {
			return err
		}
		if sleepErr := sleep(ctx, backoff(apiWaitMin, apiWaitMax, attempt-1)); sleepErr != nil {
			return fmt.Errorf("%s %s: %w (last error: %v)", product, action, sleepErr, err)
		}
	}
}

// OSS runs one OSS operation (fn) with the same retries and logging as Call.
func (c *Client) OSS(ctx context.Context, action string, fn func(ctx context.Context, client *oss.Client) error, opts ...CallOption) error {
	var o callOptions
	for _, opt := range opts {
		opt(&o)
	}
	for attempt := 1; ; attempt++ {
		start := time.Now()
		err := fromOSSError(action, c.accessKeyID, fn(ctx, c.oss))
		requestID := ""
		var apiErr *APIError
		if errors.As(err, &apiErr) {
			requestID = apiErr.RequestID
		}
		logAttempt(ctx, ProductOSS, action, attempt, time.Since(start), requestID, err)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("oss %s: %w", action, ctx.Err())
		}
		if attempt > c.maxRetries || !isRetryableCode(ErrorCode(err), o.retryCodes) {
			return err
		}
		if sleepErr := sleep(ctx, backoff(apiWaitMin, apiWaitMax, attempt-1)); sleepErr != nil {
			return fmt.Errorf("oss %s: %w (last error: %v)", action, sleepErr, err)
		}
	}
}

func fromOSSError(action, accessKeyID string, err error) error {
	if err == nil {
		return nil
	}
	var svc *oss.ServiceError
	if errors.As(err, &svc) {
		apiErr := &APIError{Product: ProductOSS, Action: action, Code: svc.Code, Message: svc.Message, RequestID: svc.RequestID, HTTPStatus: svc.StatusCode}
		if apiErr.Code == "" {
			apiErr.Code = fmt.Sprintf("HTTP%d", svc.StatusCode)
		}
		if apiErr.Code == "InvalidAccessKeyId" || apiErr.Code == "SignatureDoesNotMatch" {
			explainCredentialError(apiErr, accessKeyID)
		}
		if svc.StatusCode == http.StatusServiceUnavailable && apiErr.Code != "ServiceUnavailable" {
			apiErr.Code = "ServiceUnavailable"
		}
		return apiErr
	}
	return &TransportError{Product: ProductOSS, Action: action, Err: transportCause(err)}
}

func logAttempt(ctx context.Context, product, action string, attempt int, took time.Duration, requestID string, err error) {
	fields := map[string]any{
		"product":     product,
		"action":      action,
		"attempt":     attempt,
		"duration_ms": took.Milliseconds(),
	}
	if requestID != "" {
		fields["request_id"] = requestID
	}
	if err != nil {
		if code := ErrorCode(err); code != "" {
			fields["error_code"] = code
		} else {
			fields["error"] = err.Error()
		}
	}
	tflog.Debug(ctx, "alibaba cloud API call", fields)
}

// requestIDOf reads the RequestId field every SDK response struct has.
func requestIDOf(resp responses.AcsResponse) string {
	v := reflect.ValueOf(resp)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return ""
	}
	f := v.FieldByName("RequestId")
	if f.IsValid() && f.Kind() == reflect.String {
		return f.String()
	}
	return ""
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
