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

// RunUntilDeletedLabel, on a pod (any value), keeps kwok from completing it: a Job's pod otherwise
// Succeeds 10 or 45 seconds after it runs (kwokstages/README.md). A test gives it to a pod that must
// hold its node or quota until the test deletes it or a controller evicts it.
const RunUntilDeletedLabel = "offlinekube.gpucluster.io/run-until-deleted"
