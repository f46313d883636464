package bootstrap

// The join store (issue #31): the configured join token expires after JoinTokenTTL, so a node
// that joins later (a scale-up a week on, an autoscaled node) cannot join with it. With a
// JoinStore, every control-plane node runs a timer that creates a fresh bootstrap token with
// `kubeadm token create --ttl` and stores it in OSS, in an object only the joining nodes' RAM
// role reads (the bucket's policy, KMS encryption at rest), with the node's own RAM-role keys
// from the metadata service; a joining node reads the current token from that object right
// before kubeadm join, and its bundle holds no token at all. The object is separate from the
// bundle, so the bundle's content-addressed digest does not change as tokens do.
//
// kubeadm token create [token] makes a bootstrap token with the given time to live
// (https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-token/#cmd-token-create);
// a bootstrap token expires at its ttl and is then deleted by the TokenCleaner
// (https://kubernetes.io/docs/reference/access-authn-authz/bootstrap-tokens/). The timer runs
// every JoinTokenRefresh, a third of the ttl: the stored token always has two thirds of its life
// left while any control-plane node runs, and a failed run is tried again at the next two ticks
// before the stored token expires.
//
// The object is read and written by the bundle's fetch script (internal/bundle,
// fetch-bundle.sh, get|put), which the stub writes to FetchScriptPath on every node that boots
// from a bundle: a JoinStore is for such nodes only. Without one (inline user data) a node joins
// with the configured token, so such a pool can only grow within its first JoinTokenTTL.

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// Paths, units and figures of the join store.
const (
	// FetchScriptPath is where the bundle's stub writes its fetch script (internal/bundle).
	FetchScriptPath = "/usr/local/sbin/gpucluster-fetch-bundle.sh"
	// JoinTokenScriptPath creates a fresh token and stores it (control-plane nodes).
	JoinTokenScriptPath = "/usr/local/sbin/gpucluster-join-token.sh"
	joinTokenUnit       = "gpucluster-join-token"
	// JoinTokenRefresh is how often the control plane stores a fresh token.
	JoinTokenRefresh = "8h"
	// storedTokenPlaceholder stands for the token in the JoinConfiguration of a node that reads
	// it from the store: the script puts the stored token in its place before kubeadm join.
	storedTokenPlaceholder = "gpucluster.fromjoinstore"
)

// ObjectStore is where a node's timer reads or writes objects with the fetch script: the
// bootstrap bundle's bucket, with the node's RAM role (JoinStore, EtcdBackup).
type ObjectStore struct {
	// Region is the bucket's and the node's region.
	Region string
	// Bucket holds the objects; RoleName is the node's instance RAM role, whose keys sign the
	// requests (the role of the pool's bundle).
	Bucket, RoleName string
	// MetadataEndpoint and OSSEndpoint are the fetch script's (bundle.StubSpec, filled).
	MetadataEndpoint, OSSEndpoint string
}

// JoinStore is where the control plane keeps a valid join token for the nodes that join later:
// one OSS object per reader, in the bootstrap bundle's bucket.
type JoinStore struct {
	ObjectStore
	// TokenKey is the object a joining node reads its token from ("" on the first
	// control-plane node, which creates the cluster).
	TokenKey string
	// PublishKeys are the objects a control-plane node's timer writes a fresh token to: one
	// per joining pool's TokenKey (the bucket policy lets the control-plane role PutObject
	// exactly these).
	PublishKeys []string
}

var storeFieldRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:-]*$`)

// fields are the store's values by the node pool's attribute names (bootstrap_bundle), where the
// store comes from.
func (s ObjectStore) fields() map[string]string {
	return map[string]string{"bucket": s.Bucket, "region": s.Region, "ram_role_name": s.RoleName,
		"metadata_endpoint": s.MetadataEndpoint, "oss_endpoint": s.OSSEndpoint}
}

// checkStoreFields checks values a script line takes unquoted, by attribute name under
// bootstrap_bundle: each is limited to characters that need no quoting. The first bad one by
// name is the one named.
func checkStoreFields(fields map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if v := fields[name]; !storeFieldRE.MatchString(v) {
			return planerr.Input("bootstrap_bundle."+name, v, "is empty or has characters a node's script cannot take",
				"use letters, digits and '._/:-'")
		}
	}
	return nil
}

// validateJoinStore checks a JoinStore: every value ends up on a script's line, so each is
// limited to characters that need no quoting.
func validateJoinStore(o Options) error {
	s := o.Kubernetes.JoinStore
	if s == nil {
		return nil
	}
	fields := s.fields()
	if s.TokenKey != "" {
		fields["join_token_key"] = s.TokenKey
	}
	// Of the publish keys, the first a script cannot take, if any, is the one to name.
	if i := slices.IndexFunc(s.PublishKeys, func(k string) bool { return !storeFieldRE.MatchString(k) }); i >= 0 {
		fields["publish_join_token_keys"] = s.PublishKeys[i]
	}
	if err := checkStoreFields(fields); err != nil {
		return err
	}
	if o.Role != RoleControlPlane && len(s.PublishKeys) > 0 {
		return planerr.Input("bootstrap_bundle.publish_join_token_keys", strings.Join(s.PublishKeys, ","), "are only for control-plane nodes, which create tokens",
			"remove publish_join_token_keys from this pool")
	}
	if s.TokenKey == "" && o.joins() && !o.initNode() {
		return planerr.Input("bootstrap_bundle.join_token_key", "", "is required with publish_join_token_keys on a joining control-plane node: it reads its join token there",
			"set join_token_key to one of the keys the first control-plane pool's publish_join_token_keys names")
	}
	return nil
}

// storeArgs are the fetch script's arguments after get|put for key.
func (s ObjectStore) storeArgs(key string) string {
	return strings.Join([]string{s.MetadataEndpoint, s.OSSEndpoint, s.Region, s.Bucket, key, s.RoleName}, " ")
}

// readsStoredToken reports whether the node joins with the stored token: a joining node, or the
// replacement join (KubeadmJoinPath) of a highly available first node, which replaces a lost
// one at any time after kubeadm init, when the configured token may have expired.
func (o Options) readsStoredToken() bool {
	s := o.Kubernetes.JoinStore
	return s != nil && s.TokenKey != "" && o.joins()
}

// joinToken is the token of the node's JoinConfiguration.
func (o Options) joinToken() string {
	if o.readsStoredToken() {
		return storedTokenPlaceholder
	}
	return o.Kubernetes.JoinToken
}

// storedTokenLines define stored_token, which puts the stored token in a kubeadm configuration
// in place of the placeholder. The token goes from the fetch script's stdout into a variable and
// the file (mode 0600), never onto a command line.
func (o Options) storedTokenLines() []string {
	if o.initNode() { // its kubeadm init takes the configured token; its replacement join, initLines
		return nil
	}
	return o.storedTokenLinesFor(KubeadmPath)
}

// storedTokenLinesFor are storedTokenLines for the configuration file at path.
func (o Options) storedTokenLinesFor(path string) []string {
	if !o.readsStoredToken() {
		return nil
	}
	s := o.Kubernetes.JoinStore
	return []string{
		fmt.Sprintf(`stored_token() { local t c; t=$(%s get %s) || return 1; [[ $t =~ ^[a-z0-9]{6}\.[a-z0-9]{16}$ ]] || { echo "the join store %s/%s holds no bootstrap token" >&2; return 1; }; c=$(<"$1"); printf '%%s\n' "${c//%s/$t}" >"$1"; }`,
			FetchScriptPath, s.storeArgs(s.TokenKey), s.Bucket, s.TokenKey, storedTokenPlaceholder),
		"stored_token " + path,
	}
}

// joinTokenFiles are a control-plane node's token timer: the script, its service and timer.
func joinTokenFiles(o Options) []writeFile {
	s := o.Kubernetes.JoinStore
	if o.Role != RoleControlPlane || s == nil || len(s.PublishKeys) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("#!/bin/bash\n# Stores a fresh bootstrap token where joining nodes read it. Rendered by terraform-provider-gpucluster.\n")
	b.WriteString("set -euo pipefail\nexport KUBECONFIG=/etc/kubernetes/admin.conf\n")
	fmt.Fprintf(&b, "t=$(kubeadm token create --ttl %s --description 'gpucluster: nodes that join later')\n", JoinTokenTTL)
	for _, key := range s.PublishKeys {
		fmt.Fprintf(&b, "printf '%%s' \"$t\" | %s put %s\n", FetchScriptPath, s.storeArgs(key))
	}
	return storeTimerFiles(timerUnit{name: joinTokenUnit, description: "Store a fresh join token for nodes that join later",
		condition: "/etc/kubernetes/admin.conf", script: JoinTokenScriptPath, body: b.String(), restartSec: "1min", every: JoinTokenRefresh})
}

// timerUnit is a oneshot service that runs a script on a timer, tried again after restartSec
// when it fails, and only on a node where the condition path exists.
type timerUnit struct {
	name, description, condition, script, body, restartSec, every string
}

// storeTimerFiles are a timerUnit's files: the script, its service and timer.
func storeTimerFiles(u timerUnit) []writeFile {
	return []writeFile{
		{Path: u.script, Permissions: "0700", Owner: "root:root", Content: u.body},
		{Path: systemdDir + u.name + ".service", Permissions: "0644", Owner: "root:root",
			Content: "[Unit]\nDescription=" + u.description + "\nConditionPathExists=" + u.condition + "\n\n" +
				"[Service]\nType=oneshot\nExecStart=" + u.script + "\nRestart=on-failure\nRestartSec=" + u.restartSec + "\n"},
		{Path: systemdDir + u.name + ".timer", Permissions: "0644", Owner: "root:root",
			Content: "[Timer]\nOnUnitActiveSec=" + u.every + "\n\n[Install]\nWantedBy=timers.target\n"},
	}
}

// joinTokenLines start the timer and store a first token at once, once the node is in the
// cluster, after the phase's systemctl daemon-reload (the units came with the bundle).
// --no-block: a store that refuses the put (a bucket policy without the writer) must not fail
// the phase, and with it the add-ons that follow on the first node; the unit tries again a
// minute later (Restart=on-failure, which systemd takes for oneshot services since 244) and says
// why in its journal.
func (o Options) joinTokenLines() []string {
	if len(joinTokenFiles(o)) == 0 {
		return nil
	}
	return []string{"systemctl enable --now " + joinTokenUnit + ".timer", "systemctl start --no-block " + joinTokenUnit + ".service"}
}
