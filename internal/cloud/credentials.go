package cloud

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Environment variables the credentials chain reads. They are the names Alibaba Cloud's own tools
// use, so a shell already set up for the aliyun CLI works unchanged.
const (
	EnvAccessKeyID     = "ALIBABA_CLOUD_ACCESS_KEY_ID"
	EnvAccessKeySecret = "ALIBABA_CLOUD_ACCESS_KEY_SECRET"
	EnvSecurityToken   = "ALIBABA_CLOUD_SECURITY_TOKEN"
	EnvProfile         = "ALIBABA_CLOUD_PROFILE"
	EnvRegion          = "ALIBABA_CLOUD_REGION"
)

// Credentials are what every signed call needs. Source says where the chain found them, for
// diagnostics; it never holds a secret.
type Credentials struct {
	AccessKeyID     string
	AccessKeySecret string
	SecurityToken   string

	// RoleArn is set when a profile of mode RamRoleArn was chosen: the client exchanges the
	// access key above for temporary credentials through STS AssumeRole before the first call.
	RoleArn         string
	RoleSessionName string
	// DurationSeconds is how long the assumed role's credentials live (0 = the service default).
	DurationSeconds int

	// Region comes from a profile's region_id; used only when the provider block and the
	// environment name no region.
	Region string
	Source string
}

// String keeps secrets out of any %v, %s or %+v that might reach a log line.
func (c Credentials) String() string {
	token := "none"
	if c.SecurityToken != "" {
		token = "set (redacted)"
	}
	return fmt.Sprintf("Credentials{AccessKeyID: %s, AccessKeySecret: (redacted), SecurityToken: %s, RoleArn: %q, Source: %s}",
		c.AccessKeyID, token, c.RoleArn, c.Source)
}

// GoString does the same for %#v.
func (c Credentials) GoString() string { return c.String() }

// CredentialInput is what the provider block holds. Empty strings mean "not set".
type CredentialInput struct {
	AccessKey     string
	SecretKey     string
	SecurityToken string
	Profile       string
}

// ErrNoCredentials is returned when no link of the chain produced credentials.
var ErrNoCredentials = errors.New(`no Alibaba Cloud credentials were found. Give them in one of three ways:
  1. access_key and secret_key (and security_token for STS credentials) in the provider "gpucluster" block;
  2. the environment variables ALIBABA_CLOUD_ACCESS_KEY_ID and ALIBABA_CLOUD_ACCESS_KEY_SECRET (and ALIBABA_CLOUD_SECURITY_TOKEN);
  3. a profile in ~/.aliyun/config.json (mode AK, StsToken or RamRoleArn), chosen with profile = "name" or ALIBABA_CLOUD_PROFILE`)

// ResolveCredentials walks the chain and returns the first complete set: the provider block's
// attributes, then the environment, then a profile of ~/.aliyun/config.json. getenv and home are
// parameters so tests can run the chain without touching the real environment.
func ResolveCredentials(in CredentialInput, getenv func(string) string, home string) (Credentials, error) {
	if in.AccessKey != "" || in.SecretKey != "" {
		if in.AccessKey == "" || in.SecretKey == "" {
			return Credentials{}, fmt.Errorf("the provider block sets only one of access_key and secret_key: set both, or neither to use the environment or a profile")
		}
		return Credentials{AccessKeyID: in.AccessKey, AccessKeySecret: in.SecretKey, SecurityToken: in.SecurityToken, Source: "provider block"}, nil
	}

	envID, envSecret := getenv(EnvAccessKeyID), getenv(EnvAccessKeySecret)
	if envID != "" || envSecret != "" {
		if envID == "" || envSecret == "" {
			return Credentials{}, fmt.Errorf("only one of %s and %s is set in the environment: set both", EnvAccessKeyID, EnvAccessKeySecret)
		}
		token := in.SecurityToken
		if token == "" {
			token = getenv(EnvSecurityToken)
		}
		return Credentials{AccessKeyID: envID, AccessKeySecret: envSecret, SecurityToken: token, Source: "environment"}, nil
	}

	profile := in.Profile
	if profile == "" {
		profile = getenv(EnvProfile)
	}
	creds, found, err := credentialsFromProfileFile(filepath.Join(home, ".aliyun", "config.json"), profile)
	if err != nil {
		return Credentials{}, err
	}
	if found {
		return creds, nil
	}
	return Credentials{}, ErrNoCredentials
}

// cliConfig is the part of the aliyun CLI's config.json the chain reads.
type cliConfig struct {
	Current  string       `json:"current"`
	Profiles []cliProfile `json:"profiles"`
}

type cliProfile struct {
	Name            string `json:"name"`
	Mode            string `json:"mode"`
	AccessKeyID     string `json:"access_key_id"`
	AccessKeySecret string `json:"access_key_secret"`
	StsToken        string `json:"sts_token"`
	RAMRoleArn      string `json:"ram_role_arn"`
	RAMSessionName  string `json:"ram_session_name"`
	ExpiredSeconds  int    `json:"expired_seconds"`
	RegionID        string `json:"region_id"`
}

// credentialsFromProfileFile returns found=false when there is no file and no profile was asked
// for by name; asking for a profile that does not exist is an error, because silently falling
// through would sign requests with something the user did not choose.
func credentialsFromProfileFile(path, name string) (Credentials, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if name != "" {
			return Credentials{}, false, fmt.Errorf("profile %q was asked for, but %s does not exist: create it with `aliyun configure --profile %s`, or remove the profile setting", name, path, name)
		}
		return Credentials{}, false, nil
	}
	if err != nil {
		return Credentials{}, false, fmt.Errorf("reading %s: %w", path, err)
	}
	var cfg cliConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return Credentials{}, false, fmt.Errorf("%s is not valid JSON (%v): fix or remove it", path, err)
	}
	if name == "" {
		name = cfg.Current
	}
	if name == "" {
		name = "default"
	}
	var p *cliProfile
	for i := range cfg.Profiles {
		if cfg.Profiles[i].Name == name {
			p = &cfg.Profiles[i]
			break
		}
	}
	if p == nil {
		names := make([]string, 0, len(cfg.Profiles))
		for _, q := range cfg.Profiles {
			names = append(names, q.Name)
		}
		return Credentials{}, false, fmt.Errorf("profile %q is not in %s (profiles there: %s)", name, path, strings.Join(names, ", "))
	}

	source := fmt.Sprintf("profile %q in %s", name, path)
	if p.AccessKeyID == "" || p.AccessKeySecret == "" {
		return Credentials{}, false, fmt.Errorf("%s has no access_key_id/access_key_secret: run `aliyun configure --profile %s`", source, name)
	}
	creds := Credentials{AccessKeyID: p.AccessKeyID, AccessKeySecret: p.AccessKeySecret, Region: p.RegionID, Source: source}
	switch strings.ToLower(p.Mode) {
	case "", "ak":
	case "ststoken":
		if p.StsToken == "" {
			return Credentials{}, false, fmt.Errorf("%s has mode StsToken but no sts_token", source)
		}
		creds.SecurityToken = p.StsToken
	case "ramrolearn":
		if p.RAMRoleArn == "" {
			return Credentials{}, false, fmt.Errorf("%s has mode RamRoleArn but no ram_role_arn", source)
		}
		creds.RoleArn = p.RAMRoleArn
		creds.RoleSessionName = p.RAMSessionName
		if creds.RoleSessionName == "" {
			creds.RoleSessionName = "terraform-provider-gpucluster"
		}
		creds.DurationSeconds = p.ExpiredSeconds
	default:
		return Credentials{}, false, fmt.Errorf("%s has mode %q; this provider reads the modes AK, StsToken and RamRoleArn", source, p.Mode)
	}
	return creds, true, nil
}
