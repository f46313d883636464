// Command etcd runs an etcd member on loopback for the offline test cluster's kube-apiserver: the
// first member of a new cluster by default, or, with --initial-cluster-state=existing and the
// members' list, one that joins a running cluster after it was added there (as a learner, the way
// kubeadm join --control-plane adds the member of a new control-plane node). It embeds go.etcd.io/etcd/server/v3 rather than building etcd's own command,
// whose module is not a dependency the Kubernetes build already pulls: one go.mod serves both.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "directory for etcd's data (required)")
	clientURL := flag.String("listen-client-url", "http://127.0.0.1:2379", "client URL, loopback only")
	peerURL := flag.String("listen-peer-url", "http://127.0.0.1:2380", "peer URL, loopback only")
	name := flag.String("name", "testkube", "the member's name")
	initialCluster := flag.String("initial-cluster", "", "the members as name=peerURL,...; empty: this member alone")
	initialState := flag.String("initial-cluster-state", "new", "new: form a cluster; existing: join one that added this member")
	flag.Parse()
	if *dataDir == "" {
		log.Fatal("etcd: --data-dir is required")
	}
	cfg, err := config(*dataDir, *clientURL, *peerURL, *name, *initialCluster, *initialState)
	if err != nil {
		log.Fatalf("etcd: %v", err)
	}
	server, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatalf("etcd: start: %v", err)
	}
	defer server.Close()

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-server.Server.ReadyNotify():
		// The harness waits for this line before it starts kube-apiserver.
		fmt.Printf("etcd ready on %s\n", *clientURL)
	case err := <-server.Err():
		log.Fatalf("etcd: %v", err)
	case <-stop:
		return
	}
	select {
	case err := <-server.Err():
		log.Fatalf("etcd: %v", err)
	case <-stop:
	}
}

// config is a member listening only on the given loopback URLs: the test cluster never talks to
// another machine.
func config(dataDir, clientURL, peerURL, name, initialCluster, initialState string) (*embed.Config, error) {
	client, err := loopbackURL(clientURL)
	if err != nil {
		return nil, fmt.Errorf("--listen-client-url: %w", err)
	}
	peer, err := loopbackURL(peerURL)
	if err != nil {
		return nil, fmt.Errorf("--listen-peer-url: %w", err)
	}
	cfg := embed.NewConfig()
	cfg.Name = name
	cfg.Dir = dataDir
	cfg.ListenClientUrls = []url.URL{*client}
	cfg.AdvertiseClientUrls = []url.URL{*client}
	cfg.ListenPeerUrls = []url.URL{*peer}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	if initialCluster != "" {
		cfg.InitialCluster = initialCluster
	}
	switch initialState {
	case embed.ClusterStateFlagNew, embed.ClusterStateFlagExisting:
		cfg.ClusterState = initialState
	default:
		return nil, fmt.Errorf("--initial-cluster-state %q: want new or existing", initialState)
	}
	cfg.LogLevel = "error"
	// A test cluster lives minutes: no need to fsync every write.
	cfg.UnsafeNoFsync = true
	return cfg, nil
}

func loopbackURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
		return nil, fmt.Errorf("%q is not a loopback address: the test cluster listens on loopback only", raw)
	}
	return u, nil
}
