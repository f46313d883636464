package cloud

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// numberedList serves total items ("0", "1"...) by PageNumber and PageSize, as the ECS, VPC, NAS,
// SLB and ESS lists do, and counts the calls.
type numberedList struct {
	total, calls int
	// claimTotal, when set, is the TotalCount it answers instead of total: a server that lies.
	claimTotal int
}

func (l *numberedList) fetch(pageSize int) func(page int) ([]string, int, int, error) {
	return func(page int) ([]string, int, int, error) {
		l.calls++
		var items []string
		for i := (page - 1) * pageSize; i < min(page*pageSize, l.total); i++ {
			items = append(items, strconv.Itoa(i))
		}
		total := l.total
		if l.claimTotal > 0 {
			total = l.claimTotal
		}
		return items, len(items), total, nil
	}
}

func TestPageNumbersCollectsEveryPage(t *testing.T) {
	for _, tc := range []struct{ total, wantCalls int }{
		{0, 1},   // an empty list is one call
		{99, 1},  // a short first page is the last
		{100, 1}, // a full page reaching TotalCount is the last: no empty extra call
		{250, 3},
	} {
		l := &numberedList{total: tc.total}
		got, err := pageNumbers("things", 100, 0, l.fetch(100))
		if err != nil || len(got) != tc.total {
			t.Fatalf("total %d: got %d items, %v", tc.total, len(got), err)
		}
		if tc.total > 0 && got[tc.total-1] != strconv.Itoa(tc.total-1) {
			t.Errorf("total %d: the last item is %q", tc.total, got[tc.total-1])
		}
		if l.calls != tc.wantCalls {
			t.Errorf("total %d: %d calls, want %d", tc.total, l.calls, tc.wantCalls)
		}
	}
}

// A page the fetch function filters still counts whole: the list goes on while the server's
// pages are full, however few items the caller keeps.
func TestPageNumbersCountsThePageBeforeFiltering(t *testing.T) {
	calls := 0
	got, err := pageNumbers("things", 10, 0, func(page int) ([]string, int, int, error) {
		calls++
		if page == 3 {
			return []string{"match"}, 10, 30, nil
		}
		return nil, 10, 30, nil
	})
	if err != nil || len(got) != 1 || calls != 3 {
		t.Fatalf("got %v, %v after %d calls; want the one match from page 3", got, err, calls)
	}
}

// limit stops the list at the page that fills it.
func TestPageNumbersLimit(t *testing.T) {
	l := &numberedList{total: 1000}
	got, err := pageNumbers("things", 10, 15, l.fetch(10))
	if err != nil || len(got) != 20 || l.calls != 2 {
		t.Fatalf("got %d items, %v after %d calls; want 2 pages", len(got), err, l.calls)
	}
}

// A server that claims there is always more ends in an error at maxPages, not in a loop that
// never ends.
func TestPageNumbersGuardsAgainstEndlessPaging(t *testing.T) {
	saved := maxPages
	maxPages = 5
	t.Cleanup(func() { maxPages = saved })
	l := &numberedList{total: 1 << 30}
	_, err := pageNumbers("things", 10, 0, l.fetch(10))
	if err == nil || !strings.Contains(err.Error(), "listing things: the service was still paging after 5 pages") {
		t.Fatalf("err = %v; want the endless-paging error", err)
	}
	if l.calls != 5 {
		t.Errorf("%d calls, want 5 (maxPages)", l.calls)
	}
}

// tokenList serves pages by NextToken from a script of next tokens.
type tokenList struct {
	next  []string // the NextToken each page answers
	asked []string // the token each call sent
}

func (l *tokenList) fetch(token string) ([]string, int, string, error) {
	l.asked = append(l.asked, token)
	i := len(l.asked) - 1
	return []string{"item" + strconv.Itoa(i)}, 1, l.next[min(i, len(l.next)-1)], nil
}

func TestPageTokensFollowsNextToken(t *testing.T) {
	l := &tokenList{next: []string{"a", "b", ""}}
	got, err := pageTokens("things", 0, l.fetch)
	if err != nil || strings.Join(got, ",") != "item0,item1,item2" {
		t.Fatalf("got %v, %v", got, err)
	}
	if strings.Join(l.asked, ",") != ",a,b" {
		t.Errorf("tokens sent %q, want the first page without one, then a and b", l.asked)
	}
}

// A server that hands back a token it gave before would page forever: an error naming it.
func TestPageTokensGuardsAgainstARepeatedToken(t *testing.T) {
	l := &tokenList{next: []string{"a", "b", "a"}}
	_, err := pageTokens("things", 0, l.fetch)
	if err == nil || !strings.Contains(err.Error(), "listing things: the service returned the cursor a of an earlier page again") {
		t.Fatalf("err = %v; want the repeated-cursor error", err)
	}
	if len(l.asked) != 3 {
		t.Errorf("%d calls, want 3", len(l.asked))
	}
}

// An empty page ends a token list whatever its token says.
func TestPageTokensStopsAtAnEmptyPage(t *testing.T) {
	calls := 0
	got, err := pageTokens("things", 0, func(token string) ([]string, int, string, error) {
		calls++
		return nil, 0, "more", nil
	})
	if err != nil || len(got) != 0 || calls != 1 {
		t.Fatalf("got %v, %v after %d calls; want one empty call", got, err, calls)
	}
}

// A fetch error ends the list with that error, and no items.
func TestPageThroughReturnsFetchError(t *testing.T) {
	boom := errors.New("boom")
	got, err := pageThrough("things", 1, 0, func(page int) ([]string, int, bool, error) {
		if page == 2 {
			return nil, 0, false, boom
		}
		return []string{"x"}, page + 1, true, nil
	})
	if !errors.Is(err, boom) || got != nil {
		t.Fatalf("got %v, %v; want boom and nothing", got, err)
	}
}
