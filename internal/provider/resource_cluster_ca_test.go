package provider_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/echoprovider"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/clusterca"
)

const caAddr = "gpucluster_cluster_ca.ca"

// withEcho adds the testing framework's echo provider, which stores what its configuration is
// given: the only way a test can look at what an ephemeral resource returned.
func withEcho() map[string]func() (tfprotov6.ProviderServer, error) {
	f := acctest.ProtoV6ProviderFactories()
	f["echo"] = echoprovider.NewProviderServer()
	return f
}

// caIsKubeadms checks the state's CA: the certificate parses, is a CA, verifies with its own
// key, and its hash is the state's ca_cert_hash. With wantKey the stored private key must be the
// certificate's; without it no secret may be stored at all.
type caIsKubeadms struct {
	wantKey bool
	// hash, when set, receives the CA's hash for later steps.
	hash *string
}

func (c caIsKubeadms) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	for _, r := range req.State.Values.RootModule.Resources {
		if r.Address != caAddr {
			continue
		}
		str := func(k string) string { s, _ := r.AttributeValues[k].(string); return s }
		cert, err := clusterca.ParseCertPEM(str("cert_pem"))
		if err != nil {
			resp.Error = fmt.Errorf("cert_pem: %v", err)
			return
		}
		if err := cert.CheckSignatureFrom(cert); err != nil || !cert.IsCA || cert.Subject.CommonName != "kubernetes" {
			resp.Error = fmt.Errorf("cert_pem is not a self-signed CA for kubernetes: IsCA=%v CN=%q %v", cert.IsCA, cert.Subject.CommonName, err)
			return
		}
		if got := clusterca.CertHash(cert); got != str("ca_cert_hash") || got != str("id") {
			resp.Error = fmt.Errorf("ca_cert_hash %q and id %q, the certificate's hash is %q", str("ca_cert_hash"), str("id"), got)
			return
		}
		if c.hash != nil {
			*c.hash = str("ca_cert_hash")
		}
		if r.AttributeValues["seed_wo"] != nil {
			resp.Error = fmt.Errorf("seed_wo is in state")
			return
		}
		if !c.wantKey {
			for _, k := range []string{"private_key_pem", "certificate_key", "join_token"} {
				if r.AttributeValues[k] != nil {
					resp.Error = fmt.Errorf("%s is in state though the CA comes from a seed", k)
					return
				}
			}
			return
		}
		key, err := clusterca.ParseKeyPEM(str("private_key_pem"))
		if err != nil || !clusterca.KeyMatches(cert, key) {
			resp.Error = fmt.Errorf("private_key_pem is not the certificate's key: %v", err)
			return
		}
		if !clusterca.TokenPattern.MatchString(str("join_token")) || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(str("certificate_key")) {
			resp.Error = fmt.Errorf("malformed join_token or certificate_key")
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the state", caAddr)
}

// notEqual is a known value check that passes for any string but one.
type notEqual struct{ old *string }

func (n notEqual) CheckValue(v any) error {
	if s, ok := v.(string); !ok || s == *n.old {
		return fmt.Errorf("ca_cert_hash is still %v: the CA was not replaced", v)
	}
	return nil
}

func (n notEqual) String() string { return "not " + *n.old }

// TestAccClusterCA_random makes a CA with a random key (kept in state, sensitive), plans again
// with nothing to do, then replaces it when its validity changes.
func TestAccClusterCA_random(t *testing.T) {
	emu := acctest.StartEmulator(t)
	cfg := func(extra string) string {
		return emu.Config() + "\nresource \"gpucluster_cluster_ca\" \"ca\" {\n  " + extra + "\n}\n"
	}
	var first string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{
			{
				Config: cfg(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(caAddr, plancheck.ResourceActionCreate),
						plancheck.ExpectUnknownValue(caAddr, tfjsonpath.New("private_key_pem")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					caIsKubeadms{wantKey: true, hash: &first},
					statecheck.ExpectKnownValue(caAddr, tfjsonpath.New("key_algorithm"), knownvalue.StringExact("ECDSA-P256")),
					statecheck.ExpectKnownValue(caAddr, tfjsonpath.New("validity_period"), knownvalue.StringExact("87600h")),
				},
			},
			// Stable: the same configuration again plans nothing.
			{Config: cfg(""), PlanOnly: true},
			{
				Config: cfg(`key_algorithm = "RSA-2048"
  validity_period = "43800h"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(caAddr, plancheck.ResourceActionReplace)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					caIsKubeadms{wantKey: true},
					statecheck.ExpectKnownValue(caAddr, tfjsonpath.New("ca_cert_hash"), notEqual{&first}),
				},
			},
		},
	})
}

// caSeedConfig is a CA made from a seed given through an ephemeral variable, and the ephemeral
// resource that turns the same seed back into the secrets, checked against the certificate. The
// echo provider stores the ephemeral resource's hash and whether its secrets are well formed.
func caSeedConfig(providerBlock string, version int) string {
	return providerBlock + fmt.Sprintf(`
variable "ca_seed" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "gpucluster_cluster_ca" "ca" {
  seed_wo         = var.ca_seed
  seed_wo_version = %d
}

ephemeral "gpucluster_cluster_ca" "secrets" {
  seed     = var.ca_seed
  cert_pem = gpucluster_cluster_ca.ca.cert_pem
}

provider "echo" {
  data = {
    hash      = ephemeral.gpucluster_cluster_ca.secrets.ca_cert_hash
    token_ok  = can(regex("^[a-z0-9]{6}\\.[a-z0-9]{16}$", ephemeral.gpucluster_cluster_ca.secrets.join_token))
    key_is_ec = startswith(ephemeral.gpucluster_cluster_ca.secrets.private_key_pem, "-----BEGIN EC PRIVATE KEY-----")
    cert_key  = length(ephemeral.gpucluster_cluster_ca.secrets.certificate_key)
  }
}

resource "echo" "secrets" {}
`, version)
}

func seedHash(t *testing.T, seed string) string {
	t.Helper()
	m, err := clusterca.Derive(seed, clusterca.DefaultAlgorithm)
	if err != nil {
		t.Fatal(err)
	}
	h, err := clusterca.PublicKeyHash(m.Key.Public())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestAccClusterCA_seed makes a CA from a write-only seed: its hash is known at plan time, no
// secret is stored, the ephemeral resource derives the same CA, another seed is refused unless
// seed_wo_version changes with it, and then the CA is replaced by the new seed's.
func TestAccClusterCA_seed(t *testing.T) {
	emu := acctest.StartEmulator(t)
	seed, other := acctest.NewSeededCA(t).Seed, acctest.NewSeededCA(t).Seed
	hash, otherHash := seedHash(t, seed), seedHash(t, other)
	vars := func(s string) config.Variables { return config.Variables{"ca_seed": config.StringVariable(s)} }
	echoed := func(h string) statecheck.StateCheck {
		return statecheck.ExpectKnownValue("echo.secrets", tfjsonpath.New("data"), knownvalue.ObjectExact(map[string]knownvalue.Check{
			"hash": knownvalue.StringExact(h), "token_ok": knownvalue.Bool(true), "key_is_ec": knownvalue.Bool(true), "cert_key": knownvalue.Int64Exact(64),
		}))
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: withEcho(),
		Steps: []resource.TestStep{
			{
				Config:          caSeedConfig(emu.Config(), 1),
				ConfigVariables: vars(seed),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectKnownValue(caAddr, tfjsonpath.New("ca_cert_hash"), knownvalue.StringExact(hash)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					caIsKubeadms{wantKey: false},
					statecheck.ExpectKnownValue(caAddr, tfjsonpath.New("ca_cert_hash"), knownvalue.StringExact(hash)),
					echoed(hash),
				},
			},
			{Config: caSeedConfig(emu.Config(), 1), ConfigVariables: vars(seed), PlanOnly: true},
			{
				Config: caSeedConfig(emu.Config(), 1), ConfigVariables: vars(other), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)seed_wo does not derive this cluster CA.*change\s+seed_wo_version`),
			},
			{
				Config: caSeedConfig(emu.Config(), 2), ConfigVariables: vars(other),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(caAddr, plancheck.ResourceActionReplace)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					caIsKubeadms{wantKey: false},
					// The ephemeral resource opened on the new certificate during apply, which it
					// refuses unless the seed derives that certificate's key. (The echo resource keeps
					// what it stored at create, so it is not looked at again.)
					statecheck.ExpectKnownValue(caAddr, tfjsonpath.New("ca_cert_hash"), knownvalue.StringExact(otherHash)),
				},
			},
		},
	})
}
