package oss

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"sort"
	"time"

	sdk "github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

// Lifecycle rules are kept as the SDK's own LifecycleRule structs, so what a
// client puts is what it gets back; the emulator only validates them the way
// OSS does and fills in a missing rule ID.

const maxLifecycleRules = 1000

// transitionRank orders the classes a transition may target; a later class
// must be reached strictly later than an earlier one.
var transitionRank = map[string]int{"IA": 1, "Archive": 2, "ColdArchive": 3, "DeepColdArchive": 4}

type lifecycleXML struct {
	XMLName xml.Name            `xml:"LifecycleConfiguration"`
	Rules   []sdk.LifecycleRule `xml:"Rule"`
}

func putBucketLifecycle(c *call) *ossError {
	var cfg lifecycleXML
	if e := c.readXML("LifecycleConfiguration", &cfg); e != nil {
		return e
	}
	if e := validateLifecycle(cfg.Rules); e != nil {
		return e
	}
	if e := c.withBucket(true, func(b *bucket) *ossError {
		b.Lifecycle = cfg.Rules
		return nil
	}); e != nil {
		return e
	}
	return c.writeEmpty(http.StatusOK)
}

func getBucketLifecycle(c *call) *ossError {
	var out lifecycleXML
	if e := c.withBucket(false, func(b *bucket) *ossError {
		if len(b.Lifecycle) == 0 {
			e := newError(http.StatusNotFound, "NoSuchLifecycle", "No Row found in Lifecycle Table.")
			e.bucketName = b.Name
			return e
		}
		out.Rules = b.Lifecycle // replaced wholesale on put, never mutated
		return nil
	}); e != nil {
		return e
	}
	return c.writeXML(out)
}

func deleteBucketLifecycle(c *call) *ossError {
	if e := c.withBucket(true, func(b *bucket) *ossError {
		b.Lifecycle = nil
		return nil
	}); e != nil {
		return e
	}
	return c.writeEmpty(http.StatusNoContent)
}

// validateLifecycle checks the rule set and assigns IDs to rules without one.
func validateLifecycle(rules []sdk.LifecycleRule) *ossError {
	if len(rules) == 0 {
		return errMalformedXML("LifecycleConfiguration needs at least one Rule")
	}
	if len(rules) > maxLifecycleRules {
		return errInvalidArgument("Rule", fmt.Sprint(len(rules)), "At most %d lifecycle rules are allowed.", maxLifecycleRules)
	}
	ids := map[string]bool{}
	for i := range rules {
		r := &rules[i]
		if r.ID == nil || *r.ID == "" {
			id := newRuleID()
			r.ID = &id
		}
		if len(*r.ID) > 255 {
			return errInvalidArgument("ID", *r.ID, "Rule ID is longer than 255 characters.")
		}
		if ids[*r.ID] {
			return errInvalidArgument("ID", *r.ID, "Rule ID %q is used twice.", *r.ID)
		}
		ids[*r.ID] = true
		if e := validateRule(r); e != nil {
			return e
		}
	}
	return nil
}

func validateRule(r *sdk.LifecycleRule) *ossError {
	id := *r.ID
	if s := deref(r.Status); s != "Enabled" && s != "Disabled" {
		return errMalformedXML(fmt.Sprintf("rule %q: Status must be Enabled or Disabled", id))
	}
	if r.Expiration == nil && len(r.Transitions) == 0 && r.AbortMultipartUpload == nil &&
		r.NoncurrentVersionExpiration == nil && len(r.NoncurrentVersionTransitions) == 0 {
		return errInvalidArgument("Rule", id, "Rule %q has no action: set Expiration, Transition, AbortMultipartUpload or a NoncurrentVersion action.", id)
	}

	steps := make([]step, len(r.Transitions))
	for i, t := range r.Transitions {
		steps[i] = step{days: t.Days, date: t.CreatedBeforeDate, class: string(t.StorageClass), accessTime: t.IsAccessTime != nil && *t.IsAccessTime}
	}
	var expDays *int32
	var expDate *string
	if r.Expiration != nil {
		expDays, expDate = r.Expiration.Days, r.Expiration.CreatedBeforeDate
		if expDays != nil && *expDays <= 0 {
			return errInvalidArgument("Expiration.Days", fmt.Sprint(*expDays), "Rule %q: Expiration Days must be positive.", id)
		}
	}
	if e := validateSteps(id, "Transition", steps, expDays, expDate); e != nil {
		return e
	}

	steps = make([]step, len(r.NoncurrentVersionTransitions))
	for i, t := range r.NoncurrentVersionTransitions {
		if t.NoncurrentDays == nil {
			return errInvalidArgument("NoncurrentVersionTransition.NoncurrentDays", "", "Rule %q: NoncurrentDays is required.", id)
		}
		steps[i] = step{days: t.NoncurrentDays, class: string(t.StorageClass), accessTime: t.IsAccessTime != nil && *t.IsAccessTime}
	}
	var ncExp *int32
	if r.NoncurrentVersionExpiration != nil {
		ncExp = r.NoncurrentVersionExpiration.NoncurrentDays
	}
	return validateSteps(id, "NoncurrentVersionTransition", steps, ncExp, nil)
}

// step is one transition of either kind.
type step struct {
	days       *int32
	date       *string
	class      string
	accessTime bool
	when       time.Time // parsed date
}

// validateSteps enforces the OSS rules on a rule's transitions: a known
// target class at most once, days or a midnight date (not both, and one kind
// per rule), last-access-time rules only to IA, and a later class reached
// strictly later (more days, or an earlier CreatedBeforeDate) than an earlier
// one; an expiration must come after every transition.
func validateSteps(id, field string, steps []step, expDays *int32, expDate *string) *ossError {
	seen := map[string]bool{}
	byDays, byDate := false, false
	for i := range steps {
		s := &steps[i]
		if _, ok := transitionRank[s.class]; !ok {
			return errInvalidArgument(field+".StorageClass", s.class,
				"Rule %q: transition storage class %q is invalid: use IA, Archive, ColdArchive or DeepColdArchive.", id, s.class)
		}
		if seen[s.class] {
			return errInvalidArgument(field+".StorageClass", s.class, "Rule %q: storage class %s appears in two transitions.", id, s.class)
		}
		seen[s.class] = true
		if s.accessTime && s.class != "IA" {
			return errInvalidArgument(field+".StorageClass", s.class,
				"Rule %q: transitions based on last access time can only target IA, not %s.", id, s.class)
		}
		switch {
		case s.days != nil && s.date != nil, s.days == nil && s.date == nil:
			return errInvalidArgument(field, s.class, "Rule %q: a transition needs exactly one of Days and CreatedBeforeDate.", id)
		case s.days != nil:
			if *s.days <= 0 {
				return errInvalidArgument(field+".Days", fmt.Sprint(*s.days), "Rule %q: transition Days must be positive.", id)
			}
			byDays = true
		default:
			t, e := parseMidnight(*s.date)
			if e != nil {
				return e
			}
			s.when = t
			byDate = true
		}
	}
	if byDays && byDate {
		return errInvalidArgument(field, "", "Rule %q: do not mix Days and CreatedBeforeDate across transitions.", id)
	}

	sort.Slice(steps, func(i, j int) bool { return transitionRank[steps[i].class] < transitionRank[steps[j].class] })
	for i := 1; i < len(steps); i++ {
		prev, cur := steps[i-1], steps[i]
		if byDays && *cur.days <= *prev.days {
			return errInvalidArgument(field+".Days", fmt.Sprint(*cur.days),
				"Rule %q: the transition to %s (%d days) must come after the transition to %s (%d days).",
				id, cur.class, *cur.days, prev.class, *prev.days)
		}
		if byDate && !cur.when.Before(prev.when) {
			return errInvalidArgument(field+".CreatedBeforeDate", *cur.date,
				"Rule %q: the transition to %s must use an earlier CreatedBeforeDate than the transition to %s.",
				id, cur.class, prev.class)
		}
	}
	if len(steps) == 0 {
		return nil
	}
	last := steps[len(steps)-1]
	if expDays != nil && byDays && *expDays <= *last.days {
		return errInvalidArgument("Expiration.Days", fmt.Sprint(*expDays),
			"Rule %q: expiration (%d days) must come after the last transition (%d days).", id, *expDays, *last.days)
	}
	if expDate != nil && byDate {
		t, e := parseMidnight(*expDate)
		if e != nil {
			return e
		}
		if !t.Before(last.when) {
			return errInvalidArgument("Expiration.CreatedBeforeDate", *expDate,
				"Rule %q: expiration must use an earlier CreatedBeforeDate than the last transition.", id)
		}
	}
	return nil
}

// parseMidnight accepts ISO 8601 dates at 00:00:00 UTC, as OSS requires for
// CreatedBeforeDate.
func parseMidnight(s string) (time.Time, *ossError) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		if t, err = time.Parse("2006-01-02", s); err != nil {
			return time.Time{}, errInvalidArgument("CreatedBeforeDate", s, "CreatedBeforeDate must be an ISO 8601 date such as 2024-01-01T00:00:00.000Z.")
		}
	}
	t = t.UTC()
	if t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0 || t.Nanosecond() != 0 {
		return time.Time{}, errInvalidArgument("CreatedBeforeDate", s, "CreatedBeforeDate must be at 00:00:00 UTC.")
	}
	return t, nil
}

// newRuleID stands in for the id OSS generates for rules sent without one.
func newRuleID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
