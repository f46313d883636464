package core

import (
	"os"
	"path/filepath"
	"testing"
)

// The file is replaced whole and no temp file is left beside it.
func TestWriteFileAtomicReplacesTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	for _, data := range []string{`{"a":1}`, `{"b":2}`} {
		if err := WriteFileAtomic(path, []byte(data)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != data {
			t.Fatalf("read %q, want %q", got, data)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the directory holds %d files, want the state file alone", len(entries))
	}
}
