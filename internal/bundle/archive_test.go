package bundle_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"maps"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
)

func sampleFiles() map[string]bundle.File {
	return map[string]bundle.File{
		"/usr/local/sbin/gpucluster-bootstrap.sh":             {Mode: 0o700, Content: []byte("#!/bin/bash\necho phase\n")},
		"/etc/gpucluster/kubeadm.yaml":                        {Mode: 0o600, Content: []byte("token: abcdef.0123456789abcdef\n")},
		"/etc/systemd/system/gpucluster-bootstrap.service":    {Mode: 0o644, Content: []byte("[Unit]\n")},
		"/etc/containerd/certs.d/registry.k8s.io/hosts.toml":  {Mode: 0o644, Content: []byte{}},
		"/etc/gpucluster/binary":                              {Mode: 0o640, Content: []byte{0, 1, 2, 0xff, '\n'}},
		"/etc/gpucluster/" + strings.Repeat("long-name-", 20): {Mode: 0o600, Content: []byte("a path over tar's 100-byte name field")},
	}
}

func equalFiles(t *testing.T, got, want map[string]bundle.File) {
	t.Helper()
	if !maps.EqualFunc(got, want, func(a, b bundle.File) bool { return a.Mode == b.Mode && bytes.Equal(a.Content, b.Content) }) {
		t.Fatalf("files differ:\n got %v\nwant %v", got, want)
	}
}

func TestPackUnpackRoundTrip(t *testing.T) {
	archive, digest, err := bundle.Pack(sampleFiles())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(digest, "sha256:") || len(digest) != len("sha256:")+64 || digest != bundle.Digest(archive) {
		t.Fatalf("digest %q", digest)
	}
	got, err := bundle.Unpack(archive, digest)
	if err != nil {
		t.Fatal(err)
	}
	equalFiles(t, got, sampleFiles())
}

// The same files make the same bytes (so a pool's stub, which names the digest, stays put), and
// any change to a path, a mode or a byte makes another digest.
func TestPackIsDeterministic(t *testing.T) {
	_, first, err := bundle.Pack(sampleFiles())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, again, _ := bundle.Pack(sampleFiles()); again != first {
			t.Fatalf("pack %d gave %s, first %s", i, again, first)
		}
	}
	changes := map[string]func(map[string]bundle.File){
		"mode": func(f map[string]bundle.File) {
			f["/etc/gpucluster/kubeadm.yaml"] = bundle.File{Mode: 0o644, Content: f["/etc/gpucluster/kubeadm.yaml"].Content}
		},
		"content": func(f map[string]bundle.File) {
			f["/etc/gpucluster/kubeadm.yaml"] = bundle.File{Mode: 0o600, Content: []byte("token: x\n")}
		},
		"path": func(f map[string]bundle.File) {
			f["/etc/gpucluster/kubeadm2.yaml"] = f["/etc/gpucluster/kubeadm.yaml"]
			delete(f, "/etc/gpucluster/kubeadm.yaml")
		},
	}
	for name, change := range changes {
		files := sampleFiles()
		change(files)
		if _, d, _ := bundle.Pack(files); d == first {
			t.Errorf("a changed %s kept the digest", name)
		}
	}
}

func TestUnpackRefusesTamperedArchive(t *testing.T) {
	archive, digest, err := bundle.Pack(sampleFiles())
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, len(archive) / 2, len(archive) - 1} {
		bad := bytes.Clone(archive)
		bad[i] ^= 0x01
		if _, err := bundle.Unpack(bad, digest); err == nil || !strings.Contains(err.Error(), "digest") {
			t.Errorf("byte %d flipped: %v, want a digest error", i, err)
		}
	}
	if _, err := bundle.Unpack(archive[:len(archive)-1], digest); err == nil {
		t.Error("a truncated archive was accepted")
	}
	if _, err := bundle.Unpack(archive, "sha256:"+strings.Repeat("0", 64)); err == nil {
		t.Error("another digest was accepted")
	}
}

// rawArchive is a tar.gz with whatever headers the test wants, for what Pack never makes.
func rawArchive(t *testing.T, hdrs ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range hdrs {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write(bytes.Repeat([]byte("x"), int(h.Size))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// An archive whose digest matches but which Pack could not have made is refused all the same:
// the node agent must not write outside its root or follow links.
func TestUnpackRefusesWhatPackNeverMakes(t *testing.T) {
	file := func(name string) *tar.Header {
		return &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: 1}
	}
	cases := map[string][]*tar.Header{
		"dot-dot":   {file("etc/../../escape")},
		"absolute":  {file("/etc/passwd")},
		"symlink":   {{Typeflag: tar.TypeSymlink, Name: "etc/link", Linkname: "/etc/shadow", Mode: 0o777}},
		"directory": {{Typeflag: tar.TypeDir, Name: "etc/dir/", Mode: 0o755}},
		"setuid":    {{Typeflag: tar.TypeReg, Name: "usr/bin/x", Mode: 0o4755, Size: 1}},
		"twice":     {file("etc/a"), file("etc/a")},
	}
	for name, hdrs := range cases {
		t.Run(name, func(t *testing.T) {
			a := rawArchive(t, hdrs...)
			if files, err := bundle.Unpack(a, bundle.Digest(a)); err == nil {
				t.Fatalf("accepted: %v", files)
			}
		})
	}
}

func TestPackRefusesBadFiles(t *testing.T) {
	cases := map[string]map[string]bundle.File{
		"none":       {},
		"relative":   {"etc/x": {Mode: 0o644}},
		"unclean":    {"/etc/../x": {Mode: 0o644}},
		"trailing /": {"/etc/x/": {Mode: 0o644}},
		"root":       {"/": {Mode: 0o644}},
		"setuid":     {"/usr/bin/x": {Mode: 0o755 | fs.ModeSetuid}},
		"directory":  {"/etc/x": {Mode: 0o755 | fs.ModeDir}},
	}
	for name, files := range cases {
		if _, _, err := bundle.Pack(files); err == nil {
			t.Errorf("%s: packed", name)
		}
	}
}
