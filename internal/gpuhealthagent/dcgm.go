package gpuhealthagent

import (
	"bufio"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// dcgm-exporter's counters the agent reads (https://github.com/NVIDIA/dcgm-exporter, its default
// counters file etc/default-counters.csv): DCGM_FI_DEV_XID_ERRORS, "Value of the last XID error
// encountered", and DCGM_FI_DEV_ROW_REMAP_FAILURE, "Whether remapping of rows has failed" (which
// XID 64 reports). Each sample is labelled gpu (the index) and UUID among others.
const (
	metricXID            = "DCGM_FI_DEV_XID_ERRORS"
	metricRowRemapFailed = "DCGM_FI_DEV_ROW_REMAP_FAILURE"
)

// GPUReading is one GPU as dcgm-exporter reports it.
type GPUReading struct {
	GPU             string // the index, dcgm-exporter's gpu label
	UUID            string
	LastXID         int
	RowRemapFailure bool
}

// ParseDCGM reads dcgm-exporter's Prometheus text exposition: the two counters above, per GPU,
// sorted by index. Other metrics and comment lines are skipped; a sample of the two without a gpu
// label, or whose value is not a number, is an error (the agent then changes nothing).
func ParseDCGM(text string) ([]GPUReading, error) {
	byGPU := map[string]*GPUReading{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, labels, value, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("dcgm-exporter line %d: %w", n, err)
		}
		if name != metricXID && name != metricRowRemapFailed {
			continue
		}
		gpu, ok := labels["gpu"]
		if !ok {
			return nil, fmt.Errorf("dcgm-exporter line %d: %s has no gpu label", n, name)
		}
		r := byGPU[gpu]
		if r == nil {
			r = &GPUReading{GPU: gpu}
			byGPU[gpu] = r
		}
		r.UUID = labels["UUID"]
		if name == metricXID {
			r.LastXID = int(value)
		} else {
			r.RowRemapFailure = value != 0
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := make([]GPUReading, 0, len(byGPU))
	for _, r := range byGPU {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, errA := strconv.Atoi(out[i].GPU)
		b, errB := strconv.Atoi(out[j].GPU)
		if errA != nil || errB != nil {
			return out[i].GPU < out[j].GPU
		}
		return a < b
	})
	return out, nil
}

// parseSample splits `name{k="v",...} value [timestamp]`.
func parseSample(line string) (name string, labels map[string]string, value float64, err error) {
	labels = map[string]string{}
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return "", nil, 0, fmt.Errorf("no value in %q", line)
	}
	name, rest := line[:i], line[i:]
	if strings.HasPrefix(rest, "{") {
		end, err := parseLabels(rest[1:], labels)
		if err != nil {
			return "", nil, 0, err
		}
		rest = rest[1+end:]
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", nil, 0, fmt.Errorf("no value in %q", line)
	}
	value, err = strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return "", nil, 0, fmt.Errorf("value of %s: %w", name, err)
	}
	return name, labels, value, nil
}

// parseLabels reads `k="v",...}` into labels and answers the index just past the closing brace.
// Values are quoted with \", \\ and \n escaped, as the text format defines.
func parseLabels(s string, labels map[string]string) (int, error) {
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == ',') {
			i++
		}
		if i < len(s) && s[i] == '}' {
			return i + 1, nil
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 || i+eq+1 >= len(s) || s[i+eq+1] != '"' {
			return 0, fmt.Errorf("malformed labels %q", s)
		}
		key := strings.TrimSpace(s[i : i+eq])
		i += eq + 2
		var b strings.Builder
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				if s[i] == 'n' {
					b.WriteByte('\n')
					continue
				}
			}
			b.WriteByte(s[i])
		}
		if i >= len(s) {
			return 0, fmt.Errorf("unterminated label value in %q", s)
		}
		labels[key] = b.String()
		i++ // the closing quote
	}
}
