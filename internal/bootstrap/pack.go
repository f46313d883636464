package bootstrap

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
)

// PackUserData is the user data a node is given: the rendered (and merged) document, gzip
// compressed. ECS takes at most MaxUserDataBytes of user data before Base64, and the first
// control-plane node's plain document (kubeadm configuration, CA, add-ons, scripts) comes close
// to it; compressed it takes about two thirds of that. cloud-init reads compressed user data as
// it reads plain: "Content found to be gzip compressed will be uncompressed. The uncompressed
// data will then be used as if it were not compressed"
// (https://cloudinit.readthedocs.io/en/latest/explanation/format.html, "Gzip compressed content").
//
// No name or time in the gzip header, so the same document gives the same bytes: a pool's spec
// hash, which covers its user data, stays stable from plan to plan.
func PackUserData(doc string) string {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write([]byte(doc))
	_ = zw.Close()
	return buf.String()
}

// UnpackUserData reads user data as cloud-init does: gzip-compressed data (it starts with the
// gzip magic bytes 1f 8b) is uncompressed, anything else is returned as it is.
func UnpackUserData(raw string) (string, error) {
	if len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
		return raw, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader([]byte(raw)))
	if err != nil {
		return "", fmt.Errorf("user data starts as gzip but is not: %w", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return "", fmt.Errorf("user data starts as gzip but is not: %w", err)
	}
	return string(out), nil
}
