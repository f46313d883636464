package nodeagent

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
)

// CloudInit is what cloud-init makes of a node's user data, as far as the node agent needs it:
// the files write_files writes, decoded, by path. Every text/cloud-config part counts (the
// provider's own part first, the user's after it, merged by appending lists as its Merge-Type
// asks); other parts (user scripts) are not interpreted.
type CloudInit struct {
	Files map[string]string
	// Bundle is set when a part is a bootstrap bundle's stub (bundle.Stub: it writes
	// bundle.FetchScriptPath and its runcmd runs it): the node's files are then the bundle's too,
	// once fetched (bundle.go).
	Bundle *bundle.StubSpec
}

// cloudConfig is the part of a #cloud-config document the agent reads.
type cloudConfig struct {
	WriteFiles []writeFile `json:"write_files"`
	// RunCmd entries are lists (run as they are) or strings (run by sh), as cloud-init takes them.
	RunCmd []any `json:"runcmd"`
}

type writeFile struct {
	Path     string `json:"path"`
	Encoding string `json:"encoding"`
	Content  string `json:"content"`
}

// DecodeUserData reads user data as ECS hands it to the instance: Base64 of a #cloud-config
// document or of a MIME multipart document of parts.
func DecodeUserData(b64 string) (CloudInit, error) {
	ci := CloudInit{Files: map[string]string{}}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return ci, fmt.Errorf("user data is not Base64: %w", err)
	}
	// cloud-init uncompresses gzip user data before anything else
	// (https://cloudinit.readthedocs.io/en/latest/explanation/format.html).
	doc, err := bootstrap.UnpackUserData(string(raw))
	if err != nil {
		return ci, err
	}
	parts, err := cloudConfigParts([]byte(doc))
	if err != nil {
		return ci, err
	}
	for _, p := range parts {
		var cc cloudConfig
		if err := yaml.Unmarshal(p, &cc); err != nil {
			return ci, fmt.Errorf("cloud-config is not YAML: %w", err)
		}
		for _, f := range cc.WriteFiles {
			content, err := decodeContent(f.Encoding, f.Content)
			if err != nil {
				return ci, fmt.Errorf("write_files %s: %w", f.Path, err)
			}
			ci.Files[f.Path] = content
		}
		if spec, ok := stubOf(cc); ok {
			ci.Bundle = &spec
		}
	}
	return ci, nil
}

// stubOf reads a bundle stub's spec from its document: it writes the fetch script and one of its
// runcmd entries runs it with the stub's arguments.
func stubOf(cc cloudConfig) (bundle.StubSpec, bool) {
	if !slices.ContainsFunc(cc.WriteFiles, func(f writeFile) bool { return f.Path == bundle.FetchScriptPath }) {
		return bundle.StubSpec{}, false
	}
	for _, entry := range cc.RunCmd {
		list, ok := entry.([]any)
		if !ok {
			continue
		}
		argv := make([]string, 0, len(list))
		for _, a := range list {
			s, _ := a.(string)
			argv = append(argv, s)
		}
		if spec, ok := bundle.SpecOfCommand(argv); ok {
			return spec, true
		}
	}
	return bundle.StubSpec{}, false
}

// cloudConfigParts returns the #cloud-config documents of the user data, in order.
func cloudConfigParts(raw []byte) ([][]byte, error) {
	if bytes.HasPrefix(bytes.TrimLeft(raw, "\r\n"), []byte("#cloud-config\n")) {
		return [][]byte{raw}, nil
	}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, errors.New("user data is neither #cloud-config nor a MIME multipart document")
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mediaType, "multipart/") || params["boundary"] == "" {
		return nil, errors.New("user data is neither #cloud-config nor a MIME multipart document")
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	var out [][]byte
	for {
		p, err := r.NextRawPart()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("MIME user data: %w", err)
		}
		var body io.Reader = p
		if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "base64") {
			body = base64.NewDecoder(base64.StdEncoding, p)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			return nil, fmt.Errorf("MIME user data: %w", err)
		}
		ctype, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if ctype == "text/cloud-config" || (ctype == "" || ctype == "text/plain") && bytes.HasPrefix(b, []byte("#cloud-config")) {
			out = append(out, b)
		}
	}
}

// decodeContent undoes a write_files encoding (cloud-init's names: b64, base64, gzip, gz,
// gz+b64, gzip+base64).
func decodeContent(encoding, content string) (string, error) {
	enc := strings.ToLower(encoding)
	data := []byte(content)
	if strings.Contains(enc, "b64") || strings.Contains(enc, "base64") {
		d, err := base64.StdEncoding.DecodeString(content)
		if err != nil {
			return "", fmt.Errorf("encoding %s: %w", encoding, err)
		}
		data = d
	}
	if strings.HasPrefix(enc, "gz") {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return "", fmt.Errorf("encoding %s: %w", encoding, err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			return "", fmt.Errorf("encoding %s: %w", encoding, err)
		}
	}
	return string(data), nil
}
