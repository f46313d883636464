package emulator

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The clock moves forward by what POST /_emulator/clock says, never back, and the node agent's
// view reads it.
func TestClockAdvance(t *testing.T) {
	e := newEnv(t, Config{})
	before := e.s.View().Now
	post := func(body string) (int, string) {
		resp, err := http.Post(e.srv.URL+ClockPath, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(`{"advance": "25h"}`); code != http.StatusOK || !strings.Contains(body, `"time"`) {
		t.Fatalf("advance 25h: %d %s", code, body)
	}
	if d := e.s.View().Now.Sub(before); d < 25*time.Hour || d > 26*time.Hour {
		t.Fatalf("the view's clock moved %v, want 25h", d)
	}
	for _, bad := range []string{`{"advance": "-1h"}`, `{"advance": "soon"}`, `{}`} {
		if code, _ := post(bad); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, code)
		}
	}
}
