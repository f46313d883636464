// Package clusterca makes the cluster's Kubernetes CA before any node boots: the CA key pair, a
// self-signed certificate fit for kubeadm (its /etc/kubernetes/pki/ca.crt and ca.key), the hash
// every `kubeadm join` pins (--discovery-token-ca-cert-hash), the key `kubeadm init --upload-certs`
// encrypts the control-plane certificates with, and a bootstrap token.
//
// The material comes either from crypto/rand (Generate) or, deterministically, from a secret seed
// the user keeps elsewhere (Derive): the same seed always gives the same key, certificate key and
// token, so nothing secret has to be stored to use the CA again. The package is pure Go and calls
// no cloud API.
package clusterca
