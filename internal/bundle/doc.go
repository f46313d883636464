// Package bundle moves a node's bootstrap out of its user data (issue #31). Today the user data
// is bootstrap.Render's #cloud-config: write_files carries the script, the kubeadm
// configuration, the systemd units, the add-on manifests and, on the first control-plane node,
// the CA key, the certificate key and the join token, close to the 32 KB ECS allows, and every
// process on the node can read it from the metadata service. With a bundle those files travel
// as one archive in an OSS bucket of the region, and the user data is a stub of at most
// MaxStubBytes that fetches it.
//
// The pieces:
//
//   - FromCloudInit maps today's document to a bundle, one to one: each write_files entry is a
//     file at its path with its decoded content and its mode, owned by root, and the document's
//     runcmd (StartCommand) is what the stub runs after unpacking. What the stub could not
//     reproduce (another owner, another runcmd or cloud-config key) is refused.
//   - Pack makes the archive (a deterministic tar.gz) and its digest, "sha256:<hex>"; Unpack
//     checks the digest and gives the files back, for the node agent, which plays nodes offline.
//   - Stub renders the user data: a #cloud-config that writes fetch-bundle.sh and runs it once.
//     The script asks the metadata service for a token (security hardening mode), reads the
//     instance RAM role's STS keys, signs an OSS GetObject with them (signature V4; OSS takes V1
//     on no bucket created since September 2025), retries with backoff while anything at boot
//     lags, checks the SHA-256 digest, unpacks over / and starts bootstrap.BootstrapUnit.
//     Secrets stay in shell variables: curl reads its headers from stdin, the HMACs are
//     computed in bash, and failures name the status and OSS's error code, never a body.
//
// What it protects and what it does not: the stub holds no secret, so reading the user data
// gives nothing away. The bundle is readable by whoever holds the role's keys, and on a node the
// metadata service hands those to every process that asks, pods included, unless the node
// blocks pods from 100.100.100.200 or the bucket policy is narrowed after the node has booted.
// Give control-plane and worker nodes different roles (and keys) so a worker's role cannot read
// the first control-plane node's bundle, which holds the CA key.
//
// The wiring: internal/bundle/upload puts a node pool's bundle in its bucket (bootstrap_bundle),
// and the emulator's node agent plays a stub's node from its bundle. ARCHITECTURE.md says what
// is still to come.
package bundle
