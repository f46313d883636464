// Command benchplot turns the node pool benchmark's output into the cost curve of BENCHMARKS.md:
// a Markdown table on stdout and a PNG with one panel per cost (API calls, wall time, provider
// CPU, provider peak memory), each phase a line over the pool sizes measured.
//
//	make bench BENCH_SIZES=1000,3000,10000 | tee bench.txt
//	cd tools/benchplot && go run . -o ../../docs/images/pool-cost-curve.png < ../../bench.txt
//
// It reads the rows internal/poolbench logs:
//
//	| nodes | phase | calls | wall | provider CPU | emulator | peak RSS | calls by action |
//
// and, when a size was measured more than once, keeps the last run.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"log"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// row is one measured phase of one pool size.
type row struct {
	nodes                   int
	phase                   string
	calls                   float64
	wallS, cpuS, serveS, mb float64
	byAction                string
}

// metric is one panel of the plot.
type metric struct {
	title string
	value func(row) float64
}

var metrics = []metric{
	{"API calls", func(r row) float64 { return r.calls }},
	{"wall time, s", func(r row) float64 { return r.wallS }},
	{"provider CPU, s", func(r row) float64 { return r.cpuS }},
	{"provider peak RSS, MB", func(r row) float64 { return r.mb }},
}

func main() {
	out := flag.String("o", "pool-cost-curve.png", "PNG to write")
	flag.Parse()
	rows, err := parse(os.Stdin)
	if err != nil {
		log.Fatal(err)
	}
	if len(rows) == 0 {
		log.Fatal("no benchmark rows on stdin: pipe the output of `make bench` (or go test -bench BenchmarkNodePool -v) in")
	}
	writeTable(os.Stdout, rows)
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := png.Encode(f, plot(rows)); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

// parse reads the benchmark's table rows; later rows of the same size and phase replace earlier.
func parse(r io.Reader) ([]row, error) {
	byKey := map[string]row{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.Index(line, "|")
		if i < 0 {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line[i:]), "|"), "|")
		if len(cells) != 8 {
			continue
		}
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		nodes, err := strconv.Atoi(cells[0])
		if err != nil {
			continue // a header or another table
		}
		var x row
		x.nodes, x.phase, x.byAction = nodes, cells[1], cells[7]
		for _, f := range []struct {
			cell string
			into *float64
		}{{cells[2], &x.calls}, {cells[3], &x.wallS}, {cells[4], &x.cpuS}, {cells[5], &x.serveS}, {cells[6], &x.mb}} {
			v := strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(f.cell, "MB"), "s"))
			if *f.into, err = strconv.ParseFloat(v, 64); err != nil {
				return nil, fmt.Errorf("row %q: %q is not a number", line, f.cell)
			}
		}
		byKey[fmt.Sprintf("%09d %s", nodes, x.phase)] = x
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rows := make([]row, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, byKey[k])
	}
	return rows, nil
}

func writeTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| nodes | phase | API calls | wall | provider CPU | emulator serving | provider peak RSS | calls by action |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %.0f | %.1f s | %.1f s | %.1f s | %.1f MB | %s |\n",
			thousands(r.nodes), r.phase, r.calls, r.wallS, r.cpuS, r.serveS, r.mb, r.byAction)
	}
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Layout of the PNG: panels side by side in two rows.
const (
	panelW, panelH = 420, 300
	margin         = 50
	cols           = 2
)

var phaseColors = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xd6, 0x27, 0x28, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
}

func plot(rows []row) *image.RGBA {
	var phases []string
	seen := map[string]bool{}
	sizeSet := map[int]bool{}
	for _, r := range rows {
		if !seen[r.phase] {
			seen[r.phase] = true
			phases = append(phases, r.phase)
		}
		sizeSet[r.nodes] = true
	}
	maxNodes := 0
	for n := range sizeSet {
		maxNodes = max(maxNodes, n)
	}
	nrows := (len(metrics) + cols - 1) / cols
	img := image.NewRGBA(image.Rect(0, 0, cols*panelW, nrows*panelH+30))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	for i, m := range metrics {
		origin := image.Pt((i%cols)*panelW, (i/cols)*panelH)
		drawPanel(img, origin, m, rows, phases, maxNodes)
	}
	// Legend along the bottom.
	x := margin
	for i, ph := range phases {
		c := phaseColors[i%len(phaseColors)]
		fillRect(img, image.Rect(x, nrows*panelH+10, x+12, nrows*panelH+22), c)
		text(img, x+16, nrows*panelH+21, ph, color.Black)
		x += 24 + 7*len(ph)
	}
	return img
}

func drawPanel(img *image.RGBA, o image.Point, m metric, rows []row, phases []string, maxNodes int) {
	plotArea := image.Rect(o.X+margin, o.Y+30, o.X+panelW-20, o.Y+panelH-40)
	maxY := 0.0
	for _, r := range rows {
		maxY = max(maxY, m.value(r))
	}
	if maxY == 0 {
		maxY = 1
	}
	maxY *= 1.1
	grey := color.RGBA{0xcc, 0xcc, 0xcc, 0xff}
	text(img, o.X+margin, o.Y+18, m.title+" by pool size", color.Black)
	// Axes with four ticks each.
	line(img, plotArea.Min.X, plotArea.Max.Y, plotArea.Max.X, plotArea.Max.Y, color.Black)
	line(img, plotArea.Min.X, plotArea.Min.Y, plotArea.Min.X, plotArea.Max.Y, color.Black)
	for t := 0; t <= 4; t++ {
		y := plotArea.Max.Y - t*plotArea.Dy()/4
		line(img, plotArea.Min.X, y, plotArea.Max.X, y, grey)
		text(img, o.X+2, y+4, short(maxY*float64(t)/4), color.Black)
		x := plotArea.Min.X + t*plotArea.Dx()/4
		text(img, x-10, plotArea.Max.Y+14, short(float64(maxNodes)*float64(t)/4), color.Black)
	}
	text(img, plotArea.Max.X-40, plotArea.Max.Y+28, "nodes", color.Black)
	at := func(nodes int, v float64) (int, int) {
		return plotArea.Min.X + int(float64(nodes)/float64(maxNodes)*float64(plotArea.Dx())),
			plotArea.Max.Y - int(v/maxY*float64(plotArea.Dy()))
	}
	for i, ph := range phases {
		c := phaseColors[i%len(phaseColors)]
		var pts []image.Point
		for _, r := range rows {
			if r.phase == ph {
				x, y := at(r.nodes, m.value(r))
				pts = append(pts, image.Pt(x, y))
			}
		}
		for j, p := range pts {
			fillRect(img, image.Rect(p.X-2, p.Y-2, p.X+3, p.Y+3), c)
			if j > 0 {
				line(img, pts[j-1].X, pts[j-1].Y, p.X, p.Y, c)
			}
		}
	}
}

// short writes an axis value compactly: 12, 1.5k, 250.
func short(v float64) string {
	switch {
	case v >= 1000:
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + "k"
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
}

func fillRect(img *image.RGBA, r image.Rectangle, c color.Color) {
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src)
}

// line draws with Bresenham's algorithm.
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		img.Set(x0, y0, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func text(img *image.RGBA, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
