package bundle

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
)

// StartCommand is what the bundle's node runs once its files are written: the command
// bootstrap's runcmd runs today (render.go, cloudConfig.document), and what the stub's script
// runs after unpacking. FromCloudInit refuses a document whose runcmd is anything else, since the
// stub would not run it.
const StartCommand = "systemctl daemon-reload && systemctl enable --now " + bootstrap.BootstrapUnit

// defaultMode is the mode cloud-init gives a written file whose permissions are not set
// ("permissions ... Default: 0o644",
// https://cloudinit.readthedocs.io/en/latest/reference/modules.html#write-files); bootstrap
// leaves 0644 out for that reason.
const defaultMode fs.FileMode = 0o644

// cloudConfig is what FromCloudInit reads of a #cloud-config document: the two keys bootstrap
// writes. It is decoded strictly, so a document with any other key (packages, users, bootcmd)
// is refused rather than half carried over: the stub only writes files and starts the unit.
// Stub writes its own document with it too.
type cloudConfig = bootstrap.CloudConfig

type writeFile = bootstrap.WriteFile

// FromCloudInit maps today's node user data to a bundle: the files of the provider's own
// #cloud-config document (bootstrap.Render's, as it is or packed with bootstrap.PackUserData)
// by path, decoded (write_files encodings b64 and gz+b64), with their permissions (cloud-init's
// 0644 where none is given). The mapping is one to one: the stub unpacks the same bytes with the
// same modes to the same paths, owned by root, then runs StartCommand, which is what the
// document's runcmd runs. It refuses what the stub could not reproduce: an owner other than
// root, a runcmd other than StartCommand, any key but write_files and runcmd, a path written
// twice. The user's own parts (bootstrap.Merge) are not a bundle's business: give the document
// before merging; the user's parts stay in the user data beside the stub.
func FromCloudInit(doc string) (map[string]File, error) {
	plain, err := bootstrap.UnpackUserData(doc)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(plain, "#cloud-config\n") {
		return nil, fmt.Errorf("not a #cloud-config document (a merged MIME document? give the provider's own part)")
	}
	var cc cloudConfig
	if err := yaml.UnmarshalStrict([]byte(plain), &cc); err != nil {
		return nil, fmt.Errorf("cloud-config the stub cannot reproduce: %w", err)
	}
	want := [][]string{{"/bin/sh", "-c", StartCommand}}
	if !slices.EqualFunc(cc.RunCmd, want, slices.Equal[[]string]) {
		return nil, fmt.Errorf("runcmd %q is not the bootstrap's start (%q): the stub runs only that", cc.RunCmd, want)
	}
	files := make(map[string]File, len(cc.WriteFiles))
	for _, w := range cc.WriteFiles {
		f, err := fileOf(w)
		if err != nil {
			return nil, fmt.Errorf("write_files %s: %w", w.Path, err)
		}
		if err := checkPath(w.Path); err != nil {
			return nil, fmt.Errorf("write_files: %w", err)
		}
		if _, dup := files[w.Path]; dup {
			return nil, fmt.Errorf("write_files %s: written twice", w.Path)
		}
		files[w.Path] = f
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("the document writes no files")
	}
	return files, nil
}

// fileOf is the entry's decoded content and mode.
func fileOf(w writeFile) (File, error) {
	if w.Owner != "" && w.Owner != "root" && w.Owner != "root:root" {
		return File{}, fmt.Errorf("owner %q: a bundle's files are root's", w.Owner)
	}
	mode := defaultMode
	if w.Permissions != "" {
		m, err := strconv.ParseUint(w.Permissions, 8, 32)
		if err != nil || m&^uint64(fs.ModePerm) != 0 {
			return File{}, fmt.Errorf("permissions %q are not octal permission bits", w.Permissions)
		}
		mode = fs.FileMode(m)
	}
	content, err := decode(w.Encoding, w.Content)
	if err != nil {
		return File{}, err
	}
	return File{Mode: mode, Content: content}, nil
}

// decode undoes a write_files encoding, by cloud-init's names for them
// (https://cloudinit.readthedocs.io/en/latest/reference/modules.html#write-files: "b64",
// "base64", "gz", "gzip", "gz+b64", "gz+base64", "gzip+b64", "gzip+base64", and "text/plain"
// for none).
func decode(encoding, content string) ([]byte, error) {
	data := []byte(content)
	switch strings.ToLower(encoding) {
	case "", "text/plain":
		return data, nil
	case "b64", "base64":
		return base64.StdEncoding.DecodeString(content)
	case "gz", "gzip":
		return gunzip(data)
	case "gz+b64", "gz+base64", "gzip+b64", "gzip+base64":
		raw, err := base64.StdEncoding.DecodeString(content)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", encoding, err)
		}
		return gunzip(raw)
	}
	return nil, fmt.Errorf("encoding %q is not one cloud-init knows", encoding)
}

func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("content is not gzip: %w", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("content is not gzip: %w", err)
	}
	return out, nil
}
