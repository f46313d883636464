package offlinekube

import (
	"bytes"
	"embed"
	"os"
)

// kwokStages are the node and pod stages kwok plays (kwokstages/README.md: what each does, and
// where it comes from). kwok takes them as one multi-document configuration file.
//
//go:embed kwokstages/*.yaml
var kwokStages embed.FS

var kwokStageFiles = []string{
	"node-initialize.yaml",
	"node-heartbeat-with-lease.yaml",
	"pod-ready.yaml",
	"pod-complete.yaml",
	"pod-complete-collective.yaml",
	"pod-delete.yaml",
}

func writeKwokStages(path string) error {
	var b bytes.Buffer
	for _, name := range kwokStageFiles {
		data, err := kwokStages.ReadFile("kwokstages/" + name)
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return os.WriteFile(path, b.Bytes(), 0o600)
}
