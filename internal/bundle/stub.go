package bundle

import (
	"bytes"
	"compress/gzip"
	_ "embed" // the fetch script, kept as a file so it reads, and lints, as the shell it is
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/ecsmetadata"
)

// MaxStubBytes is the most user data the stub may take: the 4 KiB issue #31 sets, an eighth of
// the 32 KB ECS allows, so the user's own cloud-config parts keep the rest.
const MaxStubBytes = 4096

// DefaultMetadataEndpoint is the instance metadata service as every ECS instance reaches it.
const DefaultMetadataEndpoint = ecsmetadata.Endpoint

// FetchScriptPath is where the stub writes the fetch script. On disk rather than /run: should
// the node reboot between cloud-init's write_files (init stage) and its runcmd (final stage), the
// runcmd still finds it.
const FetchScriptPath = bootstrap.FetchScriptPath

//go:embed fetch-bundle.sh
var fetchScript string

// StubSpec says where a node's bundle is and who may read it.
type StubSpec struct {
	// Region is the node's and the bucket's region, such as cn-wulanchabu: the internal
	// endpoint's and the V4 signature's.
	Region string
	// Bucket and Key name the bundle's object. The key is limited to letters, digits and
	// "._-/" (no "." or ".." segment, no leading "/"): it is sent as it is, unescaped, and signed
	// as it is.
	Bucket, Key string
	// Digest is the bundle's Digest: the stub refuses any other bytes.
	Digest string
	// RoleName is the instance RAM role the bucket policy lets read the key; the stub signs with
	// its STS keys.
	RoleName string
	// MetadataEndpoint is the metadata service; "" is DefaultMetadataEndpoint. Tests point it at
	// the emulator's /_emulator/metadata/<instance-id>.
	MetadataEndpoint string
	// OSSEndpoint is the URL the object's key is appended to, after a "/"; "" is the bucket's
	// internal endpoint, https://<bucket>.oss-<region>-internal.aliyuncs.com
	// (https://www.alibabacloud.com/help/en/oss/user-guide/access-to-oss-resources-from-ecs-instances-by-using-an-internal-endpoint-of-oss).
	// The request is signed for /<bucket>/<key> either way, so a path-style endpoint
	// (http://host:port/<bucket>, as the emulator serves OSS) works too.
	OSSEndpoint string
}

// maxKeyBytes is the longest object key: "1 to 1,023 bytes in length"
// (https://www.alibabacloud.com/help/en/oss/user-guide/object-naming-conventions).
const maxKeyBytes = 1023

var (
	// https://www.alibabacloud.com/help/en/oss/user-guide/bucket-naming-conventions: lowercase
	// letters, digits and hyphens, starting and ending with a letter or digit, 3 to 63 long.
	bucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)
	// OSS allows any UTF-8 in a key (maxKeyBytes); this takes the subset that needs no
	// escaping in a URL, a V4 canonical URI or a shell, and that curl sends unchanged.
	keyRE = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._/-]*$`)
	// RAM role names: "1 to 64 characters in length, and can contain letters, digits, periods
	// (.), and hyphens (-)" (https://alibabacloud.com/help/en/resource-management/api-createrole).
	roleRE     = regexp.MustCompile(`^[A-Za-z0-9.-]{1,64}$`)
	regionRE   = regexp.MustCompile(`^[a-z]{2}(-[a-z0-9]+)+$`)
	digestRE   = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	endpointRE = regexp.MustCompile(`^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._-]+)*$`)
)

// Endpoints are the metadata service and the OSS endpoint a node in region reaches bucket at, as
// the stub's defaults (StubSpec): where the join store's objects are read and written.
func Endpoints(region, bucket string) (metadata, oss string) {
	return DefaultMetadataEndpoint, internalEndpoint(region, bucket)
}

// internalEndpoint is bucket's internal endpoint in region (StubSpec.OSSEndpoint).
func internalEndpoint(region, bucket string) string {
	return "https://" + bucket + ".oss-" + region + "-internal.aliyuncs.com"
}

// withDefaults fills the endpoints and checks every field: each ends up in a URL, a header or the
// string to sign, so none may carry a character that would change their meaning.
func (s StubSpec) withDefaults() (StubSpec, error) {
	if s.MetadataEndpoint == "" {
		s.MetadataEndpoint = DefaultMetadataEndpoint
	}
	if s.OSSEndpoint == "" {
		s.OSSEndpoint = internalEndpoint(s.Region, s.Bucket)
	}
	for _, c := range []struct {
		name, value string
		re          *regexp.Regexp
	}{
		{"region", s.Region, regionRE}, {"bucket", s.Bucket, bucketRE}, {"key", s.Key, keyRE},
		{"digest", s.Digest, digestRE}, {"role name", s.RoleName, roleRE},
		{"metadata endpoint", s.MetadataEndpoint, endpointRE}, {"OSS endpoint", s.OSSEndpoint, endpointRE},
	} {
		if !c.re.MatchString(c.value) {
			return s, fmt.Errorf("bundle stub: %s %q does not match %s", c.name, c.value, c.re)
		}
	}
	if len(s.Key) > maxKeyBytes {
		return s, fmt.Errorf("bundle stub: key is %d bytes, more than the %d OSS allows", len(s.Key), maxKeyBytes)
	}
	for _, seg := range strings.Split(s.Key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return s, fmt.Errorf("bundle stub: key %q has an empty, . or .. segment, which curl would rewrite", s.Key)
		}
	}
	return s, nil
}

// Stub is a node's user data when its files come in a bundle: a #cloud-config that writes the
// fetch script (fetch-bundle.sh, comments left out) and runs it once with the spec as its
// arguments. The script fetches the bundle with the instance role's keys, checks the digest,
// unpacks it over / and starts bootstrap.BootstrapUnit, as today's runcmd does.
//
// A cloud-config rather than a bare #! script: bootstrap.Merge takes the provider's part as a
// #cloud-config and appends the user's parts after it, so the user's runcmd entries and scripts
// still run after the bootstrap, and the node agent's reader still parses it. The stub holds no
// secret: the user data stays readable by anything on the node (its metadata service answers
// user-data to every process); the bundle takes the role's keys (the package comment says what
// that does and does not protect). An error if the stub would exceed MaxStubBytes.
func Stub(spec StubSpec) (string, error) {
	s, err := spec.withDefaults()
	if err != nil {
		return "", err
	}
	doc := cloudConfig{
		WriteFiles: []writeFile{{Path: FetchScriptPath, Permissions: "0700", Encoding: "gz+b64", Content: packScript(StubScript())}},
		RunCmd:     [][]string{command(s)},
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("bundle stub: %w", err)
	}
	stub := "#cloud-config\n" + string(out)
	if len(stub) > MaxStubBytes {
		return "", fmt.Errorf("bundle stub would be %d bytes, more than the %d it may take: shorten the key or the endpoints", len(stub), MaxStubBytes)
	}
	return stub, nil
}

// command is the stub's runcmd entry: the fetch script and its arguments, in fetch-bundle.sh's
// order (METADATA OSS REGION BUCKET KEY DIGEST ROLE UNIT).
func command(s StubSpec) []string {
	return []string{FetchScriptPath, s.MetadataEndpoint, s.OSSEndpoint, s.Region, s.Bucket, s.Key, s.Digest, s.RoleName, bootstrap.BootstrapUnit}
}

// SpecOfCommand reads a stub's runcmd entry back (the node agent's reading of a stub): false when
// argv is not a run of the fetch script with the arguments Stub gives it.
func SpecOfCommand(argv []string) (StubSpec, bool) {
	if len(argv) != 9 || argv[0] != FetchScriptPath || argv[8] != bootstrap.BootstrapUnit {
		return StubSpec{}, false
	}
	s := StubSpec{MetadataEndpoint: argv[1], OSSEndpoint: argv[2], Region: argv[3], Bucket: argv[4], Key: argv[5], Digest: argv[6], RoleName: argv[7]}
	if _, err := s.withDefaults(); err != nil {
		return StubSpec{}, false
	}
	return s, true
}

// SpecOfUserData reads the stub's spec from a node's user data (as ECS holds it): false when no
// runcmd entry of its cloud-config runs the fetch script (user data with the bootstrap inline).
func SpecOfUserData(userData string) (StubSpec, bool, error) {
	cmds, err := bootstrap.RunCommands(userData)
	if err != nil {
		return StubSpec{}, false, err
	}
	for _, argv := range cmds {
		if s, ok := SpecOfCommand(argv); ok {
			return s, true, nil
		}
	}
	return StubSpec{}, false, nil
}

// StubScript is the fetch script the stub writes: fetch-bundle.sh without its comment lines
// (the shebang kept), which the user data cannot afford. The comments stay in the source.
func StubScript() string {
	lines := strings.SplitAfter(fetchScript, "\n")
	var b strings.Builder
	for i, l := range lines {
		if i > 0 && strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

// packScript is write_files' gz+b64 encoding, with no name or time in the gzip header so the
// same script gives the same stub.
func packScript(s string) string {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // BestCompression is a valid level
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}
