package nodeagent

import (
	"fmt"
	"maps"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// A node whose user data is a bootstrap bundle's stub (bundle.Stub, issue #31) gets its files
// from the bundle: its fetch script asks the metadata service for the instance RAM role's keys,
// reads the object from the bucket's internal endpoint with them, checks the digest and unpacks
// it over /. The agent plays that fetch against the emulator's own metadata and OSS
// (emulator.Server.ReadObjectAsInstance), then plays the node from the bundle's files as it plays
// write_files. A node whose fetch would fail never starts its bootstrap: it does not register,
// its status says why and its console shows the script's last line.

// ObjectReader reads bucket/key as a program on the instance would with the keys its metadata
// service hands out for role (emulator.Server.ReadObjectAsInstance).
type ObjectReader func(instanceID, role, bucket, key string) ([]byte, error)

// ReadObjectsWith gives the agent the emulator's OSS as the instances see it. Call it before Run.
// Without it a node whose user data is a bundle stub does not register: its fetch cannot be played.
func (a *Agent) ReadObjectsWith(read ObjectReader) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.readObject = read
}

// fetchTries is how often the fetch script tries before it gives up: fetch-bundle.sh's default
// (GPUCLUSTER_BUNDLE_TRIES).
const fetchTries = 10

// fetchError is why a node's fetch of its bundle fails: why is the script's own wording of the
// last failure.
type fetchError struct{ why string }

func (e *fetchError) Error() string { return "bootstrap bundle: " + e.why }

// console is the line the fetch script leaves on the node's console when it gives up.
func (e *fetchError) console() string {
	return fmt.Sprintf("gpucluster-bundle: giving up after %d attempts: %s\n", fetchTries, e.why)
}

// fetchBundle plays the stub's fetch on instance in and answers ci with the bundle's files
// written over the user data's own (the script unpacks at runcmd, after cloud-init's
// write_files), or a *fetchError.
func (a *Agent) fetchBundle(in *emulator.InstanceView, ci CloudInit) (CloudInit, error) {
	s := *ci.Bundle
	fail := func(format string, args ...any) (CloudInit, error) {
		return ci, &fetchError{why: fmt.Sprintf(format, args...)}
	}
	// The role's keys come from the metadata service, which lists the instance's one role and
	// answers 404 for any other name or when there is none
	// (https://www.alibabacloud.com/help/en/ecs/user-guide/obtain-a-temporary-authorization-token).
	switch {
	case in.RamRole == "":
		return fail("this instance has no RAM role (metadata security-credentials: HTTP 404)")
	case in.RamRole != s.RoleName:
		return fail("this instance's RAM role is %s, not %s", in.RamRole, s.RoleName)
	}
	// An internal endpoint answers only ECS instances in its own region: "you can use internal
	// endpoints to access OSS resources from ECS instances in the same region"
	// (https://www.alibabacloud.com/help/en/oss/user-guide/regions-and-endpoints).
	if in.Region != s.Region {
		return fail("GET %s/%s: HTTP 000 (the internal endpoint of %s does not answer an instance in %s)", s.OSSEndpoint, s.Key, s.Region, in.Region)
	}
	if a.readObject == nil {
		return fail("GET %s/%s: the emulator plays no OSS for the node agent (ReadObjectsWith)", s.OSSEndpoint, s.Key)
	}
	// GetObject with the role's keys is judged by the bucket policy: a Deny refuses, then an
	// Allow naming the role's sessions grants, else the request is refused
	// (https://www.alibabacloud.com/help/en/oss/user-guide/bucket-policy/); a missing object is
	// 404 NoSuchKey (https://www.alibabacloud.com/help/en/oss/developer-reference/getobject).
	archive, err := a.readObject(in.ID, s.RoleName, s.Bucket, s.Key)
	if err != nil {
		return fail("GET %s/%s: %v", s.OSSEndpoint, s.Key, err)
	}
	files, err := bundle.Unpack(archive, s.Digest)
	if err != nil {
		return fail("%v", err)
	}
	out := CloudInit{Files: maps.Clone(ci.Files)}
	for path, f := range files {
		out.Files[path] = string(f.Content)
	}
	return out, nil
}
