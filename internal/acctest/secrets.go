package acctest

import "fmt"

// Unmarked walks a JSON value of a plan or a state next to its sensitivity mask (Terraform's
// *_sensitive documents: true where a value is sensitive, objects and lists mirroring the value)
// and reports every place a secret sits in a value the mask leaves unmarked, as "<where> holds the
// <name>". find names the secrets a string holds. The secrets audits of the provider's tests and
// of internal/clustertest share it.
func Unmarked(find func(string) []string, where string, value, mask any) []string {
	if b, ok := mask.(bool); ok && b {
		return nil
	}
	var out []string
	switch v := value.(type) {
	case string:
		for _, name := range find(v) {
			out = append(out, fmt.Sprintf("%s holds the %s", where, name))
		}
	case map[string]any:
		m, _ := mask.(map[string]any)
		for k, sub := range v {
			out = append(out, Unmarked(find, where+"."+k, sub, m[k])...)
		}
	case []any:
		l, _ := mask.([]any)
		for i, sub := range v {
			var sm any
			if i < len(l) {
				sm = l[i]
			}
			out = append(out, Unmarked(find, fmt.Sprintf("%s[%d]", where, i), sub, sm)...)
		}
	}
	return out
}
