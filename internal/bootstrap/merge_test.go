package bootstrap

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// cloudInitMerge runs cloud-init's own user-data processor and cloud-config part handler on a
// document: the parts cloud-init sees and the cloud-config it merges from them.
const cloudInitMerge = `
import json, sys, tempfile
from cloudinit import helpers, user_data, handlers
from cloudinit.handlers.cloud_config import CloudConfigPartHandler
paths = helpers.Paths({"cloud_dir": tempfile.mkdtemp()})
msg = user_data.UserDataProcessor(paths).process(open(sys.argv[1], "rb").read())
h = CloudConfigPartHandler(paths)
h.handle_part(None, handlers.CONTENT_START, None, None, None, None)
parts = []
for part in msg.walk():
    if part.is_multipart():
        continue
    ct = part.get_content_type()
    parts.append({"type": ct, "filename": part.get_filename()})
    if ct == "text/cloud-config":
        h.handle_part(None, ct, part.get_filename(), part.get_payload(decode=True).decode(), None, dict(part.items()))
print(json.dumps({"parts": parts, "config": h.cloud_buf}))
`

type mergedParts struct {
	Parts []struct {
		Type     string `json:"type"`
		Filename string `json:"filename"`
	} `json:"parts"`
	Config map[string]any `json:"config"`
}

// runCloudInitMerge needs the cloud-init Python package, which the Debian package installs for
// the system Python.
func runCloudInitMerge(t *testing.T, doc string) mergedParts {
	t.Helper()
	requireTool(t, "cloud-init", "cloud-init")
	py := requireTool(t, "/usr/bin/python3", "python3")
	dir := t.TempDir()
	script, data := filepath.Join(dir, "merge.py"), filepath.Join(dir, "user-data")
	if err := os.WriteFile(script, []byte(cloudInitMerge), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, script, data).Output()
	if err != nil {
		t.Fatalf("cloud-init user-data processing: %v\n%s", err, out)
	}
	var m mergedParts
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return m
}

func TestMerge(t *testing.T) {
	ours, err := Render(controlPlane())
	if err != nil {
		t.Fatal(err)
	}
	userMIME := "Content-Type: multipart/mixed; boundary=\"XYZ\"\nMIME-Version: 1.0\n\n" +
		"--XYZ\nContent-Type: text/x-shellscript\n\n#!/bin/sh\necho one\n" +
		"--XYZ\nContent-Type: text/cloud-config\n\n#cloud-config\nruncmd:\n- echo two\n--XYZ--\n"
	tests := []struct {
		name      string
		users     string
		unchanged bool
		parts     []string // content types cloud-init sees, in order
		runcmd    int      // runcmd entries after merging
		files     []string // write_files paths that must survive
		errWords  string
	}{
		{name: "no user data", users: "  \n", unchanged: true},
		{name: "user cloud-config appends", users: "#cloud-config\nruncmd:\n- echo user\nwrite_files:\n- path: /etc/user\n  content: hi\npackages: [htop]\n",
			parts: []string{"text/cloud-config", "text/cloud-config"}, runcmd: 2, files: []string{KubeadmPath, ScriptPath, "/etc/user"}},
		{name: "user shell script", users: "#!/bin/bash\necho user\n",
			parts: []string{"text/cloud-config", "text/x-shellscript"}, runcmd: 1, files: []string{KubeadmPath, ScriptPath}},
		{name: "user MIME multipart keeps its parts", users: userMIME,
			parts: []string{"text/cloud-config", "text/x-shellscript", "text/cloud-config"}, runcmd: 2, files: []string{KubeadmPath, ScriptPath}},
		{name: "unknown format", users: "echo hello\n", errWords: "#cloud-config"},
		{name: "MIME without boundary", users: "Content-Type: multipart/mixed\n\nbody\n", errWords: "boundary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Merge(ours, tt.users)
			if tt.errWords != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errWords) {
					t.Fatalf("Merge() error = %v, want one mentioning %q", err, tt.errWords)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.unchanged {
				if got != ours {
					t.Fatal("Merge with empty user data changed our document")
				}
				return
			}
			again, _ := Merge(ours, tt.users)
			if again != got {
				t.Fatal("Merge is not deterministic")
			}
			m := runCloudInitMerge(t, got)
			var types []string
			for _, p := range m.Parts {
				types = append(types, p.Type)
				if p.Type == "text/x-shellscript" && p.Filename <= "runcmd" {
					t.Errorf("user script %q sorts before cloud-init's runcmd script: it would run before the bootstrap", p.Filename)
				}
			}
			if strings.Join(types, ",") != strings.Join(tt.parts, ",") {
				t.Fatalf("cloud-init sees parts %v, want %v", types, tt.parts)
			}
			runcmd, _ := m.Config["runcmd"].([]any)
			if len(runcmd) != tt.runcmd {
				t.Fatalf("merged runcmd = %v, want %d entries", runcmd, tt.runcmd)
			}
			if first, _ := json.Marshal(runcmd[0]); !strings.Contains(string(first), "enable --now "+BootstrapUnit) {
				t.Fatalf("merged runcmd starts with %s, want our bootstrap first", first)
			}
			var paths []string
			wf, _ := m.Config["write_files"].([]any)
			for _, f := range wf {
				paths = append(paths, f.(map[string]any)["path"].(string))
			}
			for _, want := range tt.files {
				if !strings.Contains(strings.Join(paths, " "), want) {
					t.Fatalf("merged write_files %v lack %s", paths, want)
				}
			}
			// The merged configuration is still valid cloud-config.
			merged, err := yaml.Marshal(m.Config)
			if err != nil {
				t.Fatal(err)
			}
			cloudInitSchema(t, requireTool(t, "cloud-init", "cloud-init"), "#cloud-config\n"+string(merged))
		})
	}
}

func TestMergeRejectsOursNotCloudConfig(t *testing.T) {
	if _, err := Merge("#!/bin/sh\n", "#cloud-config\n{}\n"); err == nil {
		t.Fatal("Merge accepted a non cloud-config document as ours")
	}
}
