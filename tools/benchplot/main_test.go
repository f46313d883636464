package main

import (
	"bytes"
	"strings"
	"testing"
)

const sample = `    poolbench_test.go:314: |   1000 | create         |    64 |     3.6s |    1.2s |    0.4s |   57.3 MB | DescribeInstances=41 RunInstances=10 |
    poolbench_test.go:314: |   1000 | no-change plan |    10 |     3.2s |    0.9s |    0.1s |   60.2 MB | DescribeInstances=10 |
    poolbench_test.go:314: |  10000 | create         |   230 |    12.0s |    9.5s |    2.0s |  190.0 MB | DescribeInstances=130 RunInstances=100 |
| nodes | phase | calls | header row of another table |
    poolbench_test.go:314: |   1000 | create         |    66 |     3.9s |    1.3s |    0.4s |   57.0 MB | DescribeInstances=43 RunInstances=10 |
`

func TestParseKeepsLastRunPerSizeAndPhase(t *testing.T) {
	rows, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("parsed %d rows, want 3: %+v", len(rows), rows)
	}
	first := rows[0]
	if first.nodes != 1000 || first.phase != "create" || first.calls != 66 || first.wallS != 3.9 || first.mb != 57.0 {
		t.Errorf("first row %+v; want the second 1,000-node create (66 calls, 3.9 s, 57 MB)", first)
	}
	if rows[2].nodes != 10000 || rows[2].cpuS != 9.5 || rows[2].serveS != 2.0 {
		t.Errorf("last row %+v; want the 10,000-node create with 9.5 s CPU, 2.0 s emulator", rows[2])
	}
	var table bytes.Buffer
	writeTable(&table, rows)
	if !strings.Contains(table.String(), "| 10,000 | create | 230 | 12.0 s | 9.5 s | 2.0 s | 190.0 MB |") {
		t.Errorf("table:\n%s", table.String())
	}
}

func TestParseRejectsABadFigure(t *testing.T) {
	if _, err := parse(strings.NewReader("| 1000 | create | 64 | fast | 1.0s | 0.1s | 57.3 MB | x |\n")); err == nil {
		t.Error("a wall time of \"fast\" was accepted")
	}
}

func TestPlotDrawsEveryPanel(t *testing.T) {
	rows, _ := parse(strings.NewReader(sample))
	img := plot(rows)
	if img.Bounds().Dx() != cols*panelW {
		t.Errorf("width %d, want %d", img.Bounds().Dx(), cols*panelW)
	}
	// The create line's colour appears in each panel.
	want := phaseColors[0]
	for i := range metrics {
		o := image2(i)
		found := false
		for y := o.Y; y < o.Y+panelH && !found; y++ {
			for x := o.X; x < o.X+panelW; x++ {
				if img.RGBAAt(x, y) == want {
					found = true
					break
				}
			}
		}
		if !found {
			t.Errorf("panel %d (%s) has no create line", i, metrics[i].title)
		}
	}
}

func image2(i int) (p struct{ X, Y int }) {
	p.X, p.Y = (i%cols)*panelW, (i/cols)*panelH
	return p
}
