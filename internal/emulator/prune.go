package emulator

import (
	"bytes"
	"fmt"
	"strings"
)

// Answers are built from the older aliyun SDK's structs, which merge the fields of several
// actions (and API versions) and marshal every one of them. The vendor's per-action response
// models (responseShapes, generated from the alibabacloud-go SDK) say which fields an answer
// really carries; pruneAnswer drops the rest from the encoded JSON, so clients see the
// vendor's shape, and the conformance suite holds it there.

// shapeNode is a parsed response shape: nil is a scalar or free-form value, copied whole.
type shapeNode struct {
	fields map[string]*shapeNode
}

// responseTrees are responseShapes parsed once at start.
var responseTrees = func() map[string]*shapeNode {
	out := make(map[string]*shapeNode, len(responseShapes))
	for k, s := range responseShapes {
		n, rest, err := parseShape(s)
		if err != nil || rest != "" {
			panic(fmt.Sprintf("response shape of %s: %v (left %q)", k, err, rest))
		}
		out[k] = n
	}
	return out
}()

// parseShape reads one shape: "" or "*" (nil node) or "{name shape, ...}".
func parseShape(s string) (*shapeNode, string, error) {
	if strings.HasPrefix(s, "*") {
		return nil, s[1:], nil
	}
	if !strings.HasPrefix(s, "{") {
		return nil, s, nil
	}
	n := &shapeNode{fields: map[string]*shapeNode{}}
	s = s[1:]
	for !strings.HasPrefix(s, "}") {
		end := strings.IndexAny(s, "{},*")
		if end < 0 {
			return nil, s, fmt.Errorf("unterminated object")
		}
		name := s[:end]
		child, rest, err := parseShape(s[end:])
		if err != nil {
			return nil, rest, err
		}
		n.fields[name] = child
		s = strings.TrimPrefix(rest, ",")
	}
	return n, s[1:], nil
}

// pruneAnswer drops from an encoded answer the fields the action's vendor model lacks; answers
// of actions without a model pass unchanged.
func pruneAnswer(key string, body []byte) []byte {
	t := responseTrees[key]
	if t == nil {
		return body
	}
	p := pruner{src: body, memo: map[*shapeNode]*keySeq{}}
	out, _ := p.value(make([]byte, 0, len(body)), 0, t)
	return out
}

// prune is pruneAnswer, showing the untrimmed answer to seeUnpruned first.
func (s *Server) prune(key string, body []byte) []byte {
	if s.seeUnpruned != nil {
		s.seeUnpruned(key, body)
	}
	return pruneAnswer(key, body)
}

// pruner walks one encoded answer. encoding/json writes the fields of a struct in the same order
// every time, so the objects of a list repeat one key sequence: memo remembers, per shape node,
// the keys seen last and what became of them, and a key equal to the one remembered at its
// position skips the map lookup.
type pruner struct {
	src  []byte
	memo map[*shapeNode]*keySeq
}

type keySeq struct {
	keys     [][]byte
	children []*shapeNode
	kept     []bool
}

// value copies the JSON value at src[i] to dst, keeping only the fields t allows, and answers
// the index after it. src is compact JSON from encoding/json.
func (p *pruner) value(dst []byte, i int, t *shapeNode) ([]byte, int) {
	src := p.src
	if t == nil || i >= len(src) || (src[i] != '{' && src[i] != '[') {
		j := skipValue(src, i)
		return append(dst, src[i:j]...), j
	}
	if src[i] == '[' {
		dst = append(dst, '[')
		i++
		for first := true; src[i] != ']'; first = false {
			if !first {
				dst = append(dst, ',')
			}
			dst, i = p.value(dst, i, t)
			if src[i] == ',' {
				i++
			}
		}
		return append(dst, ']'), i + 1
	}
	seq := p.memo[t]
	if seq == nil {
		seq = &keySeq{}
		p.memo[t] = seq
	}
	dst = append(dst, '{')
	i++
	first := true
	for n := 0; src[i] != '}'; n++ {
		k := skipString(src, i) // the key, quoted
		key := src[i+1 : k-1]
		i = k + 1 // past ':'
		var child *shapeNode
		var kept bool
		if n < len(seq.keys) && string(seq.keys[n]) == string(key) {
			child, kept = seq.children[n], seq.kept[n]
		} else {
			child, kept = t.fields[string(key)]
			if n < len(seq.keys) {
				seq.keys[n], seq.children[n], seq.kept[n] = key, child, kept
			} else {
				seq.keys, seq.children, seq.kept = append(seq.keys, key), append(seq.children, child), append(seq.kept, kept)
			}
		}
		if kept {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, src[i-(len(key)+3):i]...) // "key":
			dst, i = p.value(dst, i, child)
		} else {
			i = skipValue(src, i)
		}
		if src[i] == ',' {
			i++
		}
	}
	return append(dst, '}'), i + 1
}

// skipString answers the index just after the JSON string starting at src[i].
func skipString(src []byte, i int) int {
	for i++; ; {
		j := bytes.IndexByte(src[i:], '"')
		if j < 0 {
			return len(src)
		}
		i += j
		bs := 0
		for k := i - 1; src[k] == '\\'; k-- {
			bs++
		}
		if bs%2 == 0 {
			return i + 1
		}
		i++
	}
}

// skipValue answers the index just after the JSON value starting at src[i].
func skipValue(src []byte, i int) int {
	switch src[i] {
	case '"':
		return skipString(src, i)
	case '{', '[':
		depth := 0
		for ; i < len(src); i++ {
			switch src[i] {
			case '"':
				i = skipValue(src, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(src) && src[i] != ',' && src[i] != '}' && src[i] != ']' {
		i++
	}
	return i
}

// mergeTables joins the per-product response shape tables into one.
func mergeTables(tables ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, t := range tables {
		for k, v := range t {
			out[k] = v
		}
	}
	return out
}
