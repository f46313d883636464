package cloud

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeProfileFile writes an aliyun CLI config.json under a temporary HOME and returns HOME.
func writeProfileFile(t *testing.T, content string) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, ".aliyun")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

const profileFile = `{
  "current": "lab",
  "profiles": [
    {"name": "default", "mode": "AK", "access_key_id": "AK-DEFAULT", "access_key_secret": "SK-DEFAULT", "region_id": "cn-hangzhou"},
    {"name": "lab", "mode": "AK", "access_key_id": "AK-LAB", "access_key_secret": "SK-LAB", "region_id": "cn-wulanchabu"},
    {"name": "temp", "mode": "StsToken", "access_key_id": "STS.AK", "access_key_secret": "STS-SK", "sts_token": "TOKEN-123"},
    {"name": "role", "mode": "RamRoleArn", "access_key_id": "AK-ROLE", "access_key_secret": "SK-ROLE", "ram_role_arn": "acs:ram::123:role/gpu", "ram_session_name": "tf", "expired_seconds": 1800},
    {"name": "weird", "mode": "EcsRamRole", "access_key_id": "A", "access_key_secret": "B"},
    {"name": "nosts", "mode": "StsToken", "access_key_id": "A", "access_key_secret": "B"}
  ]
}`

func TestResolveCredentials(t *testing.T) {
	home := writeProfileFile(t, profileFile)
	emptyHome := t.TempDir()

	tests := []struct {
		name       string
		in         CredentialInput
		env        map[string]string
		home       string
		wantID     string
		wantSecret string
		wantToken  string
		wantRole   string
		wantRegion string
		wantSource string
		wantErr    string
	}{
		{
			name:   "attributes win over environment and profile",
			in:     CredentialInput{AccessKey: "AK-ATTR", SecretKey: "SK-ATTR", SecurityToken: "TOK-ATTR"},
			env:    map[string]string{EnvAccessKeyID: "AK-ENV", EnvAccessKeySecret: "SK-ENV"},
			home:   home,
			wantID: "AK-ATTR", wantSecret: "SK-ATTR", wantToken: "TOK-ATTR", wantSource: "provider block",
		},
		{
			name:    "half of a key pair in the block is an error",
			in:      CredentialInput{AccessKey: "AK-ATTR"},
			home:    home,
			wantErr: "only one of access_key and secret_key",
		},
		{
			name:   "environment wins over profile",
			env:    map[string]string{EnvAccessKeyID: "AK-ENV", EnvAccessKeySecret: "SK-ENV", EnvSecurityToken: "TOK-ENV"},
			home:   home,
			wantID: "AK-ENV", wantSecret: "SK-ENV", wantToken: "TOK-ENV", wantSource: "environment",
		},
		{
			name:    "half of a key pair in the environment is an error",
			env:     map[string]string{EnvAccessKeySecret: "SK-ENV"},
			home:    home,
			wantErr: "only one of ALIBABA_CLOUD_ACCESS_KEY_ID and ALIBABA_CLOUD_ACCESS_KEY_SECRET",
		},
		{
			name:   "profile file's current profile when none is named",
			home:   home,
			wantID: "AK-LAB", wantSecret: "SK-LAB", wantRegion: "cn-wulanchabu", wantSource: `profile "lab"`,
		},
		{
			name:   "profile named in the block",
			in:     CredentialInput{Profile: "default"},
			home:   home,
			wantID: "AK-DEFAULT", wantSecret: "SK-DEFAULT", wantRegion: "cn-hangzhou", wantSource: `profile "default"`,
		},
		{
			name:   "profile named in the environment",
			env:    map[string]string{EnvProfile: "temp"},
			home:   home,
			wantID: "STS.AK", wantSecret: "STS-SK", wantToken: "TOKEN-123", wantSource: `profile "temp"`,
		},
		{
			name:   "RamRoleArn profile carries the role to assume",
			in:     CredentialInput{Profile: "role"},
			home:   home,
			wantID: "AK-ROLE", wantSecret: "SK-ROLE", wantRole: "acs:ram::123:role/gpu", wantSource: `profile "role"`,
		},
		{
			name:    "unknown profile lists the ones that exist",
			in:      CredentialInput{Profile: "nope"},
			home:    home,
			wantErr: `profile "nope" is not in`,
		},
		{
			name:    "unsupported mode is named",
			in:      CredentialInput{Profile: "weird"},
			home:    home,
			wantErr: `mode "EcsRamRole"`,
		},
		{
			name:    "StsToken without a token",
			in:      CredentialInput{Profile: "nosts"},
			home:    home,
			wantErr: "no sts_token",
		},
		{
			name:    "profile asked for but no file",
			in:      CredentialInput{Profile: "lab"},
			home:    emptyHome,
			wantErr: "does not exist",
		},
		{
			name:    "nothing anywhere lists the three ways",
			home:    emptyHome,
			wantErr: "Give them in one of three ways",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveCredentials(tc.in, envOf(tc.env), tc.home)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "SK-") {
					t.Fatalf("error text carries a secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got.AccessKeyID != tc.wantID || got.AccessKeySecret != tc.wantSecret || got.SecurityToken != tc.wantToken ||
				got.RoleArn != tc.wantRole || got.Region != tc.wantRegion {
				t.Fatalf("got id=%q secret=%q token=%q role=%q region=%q, want %q %q %q %q %q", got.AccessKeyID, got.AccessKeySecret,
					got.SecurityToken, got.RoleArn, got.Region, tc.wantID, tc.wantSecret, tc.wantToken, tc.wantRole, tc.wantRegion)
			}
			if !strings.Contains(got.Source, tc.wantSource) {
				t.Fatalf("source = %q, want it to contain %q", got.Source, tc.wantSource)
			}
		})
	}
}

func TestNoCredentialsErrorIsSentinel(t *testing.T) {
	_, err := ResolveCredentials(CredentialInput{}, envOf(nil), t.TempDir())
	if !errors.Is(err, ErrNoCredentials) {
		t.Fatalf("got %v, want ErrNoCredentials", err)
	}
	for _, way := range []string{"access_key and secret_key", EnvAccessKeyID, "~/.aliyun/config.json"} {
		if !strings.Contains(err.Error(), way) {
			t.Errorf("the error does not name %q: %v", way, err)
		}
	}
}

func TestCredentialsNeverPrintSecrets(t *testing.T) {
	c := Credentials{AccessKeyID: "AK-1", AccessKeySecret: "very-secret", SecurityToken: "token-xyz", Source: "test"}
	for _, text := range []string{c.String(), c.GoString()} {
		if strings.Contains(text, "very-secret") || strings.Contains(text, "token-xyz") {
			t.Fatalf("printed credentials leak a secret: %s", text)
		}
		if !strings.Contains(text, "AK-1") {
			t.Fatalf("printed credentials should name the access key: %s", text)
		}
	}
}

func TestRedactErrorStripsSignedQuery(t *testing.T) {
	err := errors.New(`Post "http://127.0.0.1:1/?AccessKeyId=AK&SecurityToken=tok-secret&Signature=abc": dial tcp 127.0.0.1:1: connect: connection refused`)
	got := redactError(err).Error()
	if strings.Contains(got, "tok-secret") || strings.Contains(got, "Signature=") {
		t.Fatalf("query survived redaction: %s", got)
	}
	if !strings.Contains(got, "http://127.0.0.1:1/") || !strings.Contains(got, "connection refused") {
		t.Fatalf("redaction lost the useful part: %s", got)
	}
}
