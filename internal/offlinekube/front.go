package offlinekube

import (
	"io"
	"net"
	"sync"
)

// front is a TCP relay on a port of its own to one backend at a time, which can change while it
// runs; a connection stays with the backend it was relayed to until either side closes it.
//
// The cluster's API endpoint (the URL in every kubeconfig) is one, in front of the kube-apiserver
// that serves now, as the load balancer in front of a kubeadm cluster's API servers is (the
// provider's control-plane endpoint). It relays TLS untouched: the clients verify the API
// server's own certificate, valid for 127.0.0.1. An upgrade replaces the API server without the
// clients' URL changing: the new server starts on a port of its own, the front sends new
// connections to it once it is ready, and the old one stops, closing the connections still
// relayed to it (client-go reconnects, and re-lists and re-watches, through the front).
// The cluster's etcd endpoint is another, in front of a running member (etcdmembers.go).
type front struct {
	ln net.Listener

	mu      sync.Mutex
	backend string // host:port of the serving kube-apiserver
	conns   map[net.Conn]struct{}
	closed  bool
	done    chan struct{}
}

// newFront listens on addr and relays each connection to backend.
func newFront(addr, backend string) (*front, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	f := &front{ln: ln, backend: backend, conns: map[net.Conn]struct{}{}, done: make(chan struct{})}
	go f.serve()
	return f, nil
}

// setBackend sends the connections accepted from now on to backend. Safe on nil.
func (f *front) setBackend(backend string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.backend = backend
}

func (f *front) serve() {
	defer close(f.done)
	for {
		client, err := f.ln.Accept()
		if err != nil {
			return // closed
		}
		go f.relay(client)
	}
}

// relay copies between client and the backend of the moment until either side closes. A backend
// that refuses (none is serving yet, or it stopped) closes the client's connection, as a load
// balancer without a healthy server would.
func (f *front) relay(client net.Conn) {
	f.mu.Lock()
	backend := f.backend
	f.mu.Unlock()
	server, err := net.Dial("tcp", backend)
	if err != nil {
		_ = client.Close()
		return
	}
	if !f.track(client, server) {
		_ = client.Close()
		_ = server.Close()
		return
	}
	defer f.untrack(client, server)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// Either side ending ends the relay: the other copy returns once both are closed.
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go pipe(server, client)
	go pipe(client, server)
	<-done
	<-done
}

func (f *front) track(conns ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	for _, c := range conns {
		f.conns[c] = struct{}{}
	}
	return true
}

func (f *front) untrack(conns ...net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range conns {
		delete(f.conns, c)
	}
}

// close stops accepting and ends every relayed connection. Safe on nil and more than once.
func (f *front) close() {
	if f == nil {
		return
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	conns := make([]net.Conn, 0, len(f.conns))
	for c := range f.conns {
		conns = append(conns, c)
	}
	f.mu.Unlock()
	_ = f.ln.Close()
	for _, c := range conns {
		_ = c.Close()
	}
	<-f.done
}
