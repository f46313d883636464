package emulator

import (
	"errors"
	"fmt"

	emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/oss"
)

// ErrNoRoleKeys is ReadObjectAsInstance's answer when the instance's metadata service has no keys
// of the role asked for: the instance carries no RAM role, or another one. The metadata service
// answers such a request 404 (serveRoleKeys), so a program on the node has nothing to sign with.
var ErrNoRoleKeys = errors.New("the metadata service has no keys of this role for the instance")

// ReadObjectAsInstance reads bucket/key as a program on the instance would with its RAM role's
// keys: the keys its metadata service hands out for role (issued as serveRoleKeys issues them),
// judged by the bucket's policy as a request signed with them is (oss.Handler.GetObjectAs). For
// the node agent, which plays the node's fetch of its bootstrap bundle offline. Errors:
// ErrNoRoleKeys, an unknown instance, or OSS's refusal (*oss.ObjectError).
func (s *Server) ReadObjectAsInstance(instanceID, role, bucket, key string) ([]byte, error) {
	k, err := s.instanceRoleKey(instanceID, role)
	if err != nil {
		return nil, err
	}
	return s.oss.GetObjectAs(k, bucket, key)
}

// WriteObjectAsInstance stores body at bucket/key as a program on the instance would with its RAM
// role's keys, judged by the bucket policy (oss.Handler.PutObjectAs): the node agent plays a
// control-plane node's join-token timer with it. Errors as ReadObjectAsInstance's.
func (s *Server) WriteObjectAsInstance(instanceID, role, bucket, key string, body []byte) error {
	k, err := s.instanceRoleKey(instanceID, role)
	if err != nil {
		return err
	}
	return s.oss.PutObjectAs(k, bucket, key, body)
}

// instanceRoleKey is the OSS key the instance's metadata service hands out for role.
func (s *Server) instanceRoleKey(instanceID, role string) (oss.Key, error) {
	var none oss.Key
	s.mu.RLock()
	in, found := emuecs.InstanceOf(s.adminCall(s.now()), instanceID)
	s.mu.RUnlock()
	if !found {
		return none, fmt.Errorf("no instance %s", instanceID)
	}
	if in.RamRole == "" || role != in.RamRole {
		return none, fmt.Errorf("%w (role %q; the instance's is %q)", ErrNoRoleKeys, role, in.RamRole)
	}
	creds := s.roleKeys(in.ID, role)
	k, ok := s.ossCredentials(creds.AccessKeyID)
	if !ok {
		return none, fmt.Errorf("the role key of %s is unknown to the emulator", instanceID)
	}
	return k, nil
}
