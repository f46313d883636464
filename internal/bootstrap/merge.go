package bootstrap

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"
)

// MergeType is the cloud-init merge strategy written on every part: later cloud-config parts
// append to lists (write_files, runcmd, packages) and recurse into dictionaries instead of
// replacing ours, which is cloud-init's default (dict(replace)+list()+str()).
const MergeType = "dict(no_replace,recurse_array)+list(append)+str()"

// contentTypes maps the first line of a user-data part to its cloud-init MIME type.
var contentTypes = []struct{ prefix, mime string }{
	{"#cloud-config-archive", "text/cloud-config-archive"},
	{"#cloud-config-jsonp", "text/cloud-config-jsonp"},
	{"#cloud-config", "text/cloud-config"},
	{"#cloud-boothook", "text/cloud-boothook"},
	{"#include", "text/x-include-url"},
	{"#part-handler", "text/part-handler"},
	{"## template: jinja", "text/jinja2"},
	{"#!", "text/x-shellscript"},
}

// Merge combines our #cloud-config document with the user's own user data into one MIME
// multipart document that cloud-init reads part by part. ours comes first, so the user's
// cloud-config (merged with MergeType) adds to our write_files and runs its runcmd entries after
// our bootstrap; a user shell script is named so it sorts after cloud-init's "runcmd" script and
// also runs after the bootstrap. An empty users returns ours unchanged. A users document that is
// already MIME multipart keeps its parts, after ours. The boundary is derived from the content,
// so the same inputs give the same bytes (stable plans).
func Merge(ours, users string) (string, error) {
	if !strings.HasPrefix(ours, "#cloud-config") {
		return "", fmt.Errorf("our document must start with #cloud-config")
	}
	if strings.TrimSpace(users) == "" {
		return ours, nil
	}
	type part struct {
		ctype, filename, body string
	}
	parts := []part{{"text/cloud-config", "gpucluster-bootstrap.cfg", ours}}
	if isMIME(users) {
		userParts, err := readMIME(users)
		if err != nil {
			return "", fmt.Errorf("user_data looks like MIME multipart but cannot be read: %w", err)
		}
		for i, p := range userParts {
			parts = append(parts, part{p.ctype, fmt.Sprintf("user-data-%02d%s", i+1, p.ext()), p.body})
		}
	} else {
		ctype := detectType(users)
		if ctype == "" {
			return "", fmt.Errorf("user_data starts with %q, which cloud-init does not recognise: start it with #cloud-config, #! (a script), #include, #cloud-boothook or ## template: jinja",
				firstLine(users))
		}
		parts = append(parts, part{ctype, "user-data" + userPart{ctype: ctype}.ext(), users})
	}

	sum := sha256.New()
	for _, p := range parts {
		_, _ = io.WriteString(sum, p.ctype+"\x00"+p.body+"\x00")
	}
	boundary := "gpucluster-" + hex.EncodeToString(sum.Sum(nil))[:32]

	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.SetBoundary(boundary); err != nil {
		return "", err
	}
	fmt.Fprintf(&buf, "Content-Type: multipart/mixed; boundary=\"%s\"\r\nMIME-Version: 1.0\r\n\r\n", boundary)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", p.ctype+`; charset="utf-8"`)
		h.Set("MIME-Version", "1.0")
		h.Set("Content-Transfer-Encoding", "7bit")
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, p.filename))
		if p.ctype == "text/cloud-config" {
			h.Set("Merge-Type", MergeType)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			return "", err
		}
		if _, err := io.WriteString(w, p.body); err != nil {
			return "", err
		}
	}
	if err := mw.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

type userPart struct{ ctype, body string }

// ext gives script parts a name that sorts after "runcmd" in cloud-init's scripts directory.
func (p userPart) ext() string {
	switch p.ctype {
	case "text/x-shellscript":
		return ".sh"
	case "text/cloud-config":
		return ".cfg"
	}
	return ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimLeft(s, "\r\n"), "\n")
	if len(line) > 40 {
		line = line[:40] + "..."
	}
	return strings.TrimSpace(line)
}

func detectType(s string) string {
	head := strings.TrimLeft(s, "\r\n")
	for _, ct := range contentTypes {
		if strings.HasPrefix(head, ct.prefix) {
			return ct.mime
		}
	}
	return ""
}

// isMIME reports whether the document starts with MIME headers naming a multipart type.
func isMIME(s string) bool {
	hdr, _, ok := strings.Cut(s, "\n\n")
	if !ok {
		hdr, _, ok = strings.Cut(s, "\r\n\r\n")
	}
	if !ok {
		return false
	}
	for _, line := range strings.Split(hdr, "\n") {
		k, v, found := strings.Cut(line, ":")
		if found && strings.EqualFold(strings.TrimSpace(k), "Content-Type") &&
			strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), "multipart/") {
			return true
		}
	}
	return false
}

func readMIME(s string) ([]userPart, error) {
	hdr, body, ok := strings.Cut(strings.ReplaceAll(s, "\r\n", "\n"), "\n\n")
	if !ok {
		return nil, fmt.Errorf("no blank line after the headers")
	}
	var ctype string
	for _, line := range strings.Split(hdr, "\n") {
		if k, v, found := strings.Cut(line, ":"); found && strings.EqualFold(strings.TrimSpace(k), "Content-Type") {
			ctype = strings.TrimSpace(v)
		}
	}
	_, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return nil, err
	}
	if params["boundary"] == "" {
		return nil, fmt.Errorf("Content-Type has no boundary")
	}
	r := multipart.NewReader(strings.NewReader(body), params["boundary"])
	var out []userPart
	for {
		p, err := r.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if enc := p.Header.Get("Content-Transfer-Encoding"); enc != "" && !strings.EqualFold(enc, "7bit") && !strings.EqualFold(enc, "8bit") {
			return nil, fmt.Errorf("part with Content-Transfer-Encoding %s: give the parts as plain text", enc)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		pt, _, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if err != nil || pt == "text/plain" || pt == "" {
			pt = detectType(string(b))
		}
		if pt == "" {
			return nil, fmt.Errorf("a part has no Content-Type cloud-init understands")
		}
		out = append(out, userPart{ctype: pt, body: string(b)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no parts")
	}
	return out, nil
}
