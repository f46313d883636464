package storageplan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// OSS storage classes a lifecycle rule can move objects to, in the order objects go down.
const (
	ClassIA          = "IA"
	ClassArchive     = "Archive"
	ClassColdArchive = "ColdArchive"
)

// Minimum storage durations (internal/catalog/SOURCES.md section 3; vendor page:
// https://www.alibabacloud.com/help/en/oss/product-overview/billing-method-for-objects-whose-storage-duration-is-less-than-the-minimum-storage-duration):
// IA 30 days, Archive 60 days counted from the object's last modification, ColdArchive 180 days
// counted from the transition. IA's 30 days are counted here from the transition, the later of
// the two starting points, which keeps objects clear of early-deletion charges under either reading.
const (
	MinDaysIA          = 30
	MinDaysArchive     = 60
	MinDaysColdArchive = 180
)

// Lifecycle is the cold tier's object lifecycle: days after the last modification. 0 = not set.
type Lifecycle struct {
	IAAfterDays          int
	ArchiveAfterDays     int
	ColdArchiveAfterDays int
	ExpireAfterDays      int
}

// Transition is one lifecycle step to a colder storage class.
type Transition struct {
	Days         int
	StorageClass string
}

// Attribute names, for messages that point at the configuration.
const (
	AttrIA          = "ia_after_days"
	AttrArchive     = "archive_after_days"
	AttrColdArchive = "cold_archive_after_days"
	AttrExpire      = "expire_after_days"
)

type step struct {
	attr, class string
	days        int
}

func (l Lifecycle) steps() []step {
	all := []step{
		{AttrIA, ClassIA, l.IAAfterDays},
		{AttrArchive, ClassArchive, l.ArchiveAfterDays},
		{AttrColdArchive, ClassColdArchive, l.ColdArchiveAfterDays},
		{AttrExpire, "", l.ExpireAfterDays},
	}
	var out []step
	for _, s := range all {
		if s.days != 0 {
			out = append(out, s)
		}
	}
	return out
}

// IsZero reports whether no step is set.
func (l Lifecycle) IsZero() bool { return l == Lifecycle{} }

// Transitions lists the storage class changes, in order.
func (l Lifecycle) Transitions() []Transition {
	var out []Transition
	for _, s := range l.steps() {
		if s.class != "" {
			out = append(out, Transition{Days: s.days, StorageClass: s.class})
		}
	}
	return out
}

// lifecycleAttr is the storage tier attribute that holds the steps.
const lifecycleAttr = "object_lifecycle"

// lifecyclePath is the path of one step's attribute on the storage tier.
func lifecyclePath(attr string) string { return lifecycleAttr + "." + attr }

// Validate checks that the steps go IA, then Archive, then ColdArchive, then expiry, each on a
// later day than the one before, and that every class is kept for its minimum storage duration
// before the next step. Errors name the attribute to change and the smallest value that works.
func (l Lifecycle) Validate() error {
	for _, s := range []step{{AttrIA, ClassIA, l.IAAfterDays}, {AttrArchive, ClassArchive, l.ArchiveAfterDays},
		{AttrColdArchive, ClassColdArchive, l.ColdArchiveAfterDays}, {AttrExpire, "", l.ExpireAfterDays}} {
		if s.days < 0 {
			return planerr.New(lifecyclePath(s.attr), strconv.Itoa(s.days), "days must be 1 or more", "set "+s.attr+" to 1 or more, or leave it out",
				fmt.Errorf("%w: %s = %d: days must be 1 or more (or left out)", ErrInvalid, s.attr, s.days))
		}
	}
	steps := l.steps()
	if len(steps) == 0 {
		fix := fmt.Sprintf("set at least one of %s, %s, %s, %s, or leave object_lifecycle out", AttrIA, AttrArchive, AttrColdArchive, AttrExpire)
		return planerr.New(lifecycleAttr, "", "object_lifecycle sets no step", fix,
			fmt.Errorf("%w: object_lifecycle sets no step: %s", ErrInvalid, fix))
	}
	for i := 1; i < len(steps); i++ {
		prev, cur := steps[i-1], steps[i]
		if cur.days <= prev.days {
			return planerr.New(lifecyclePath(cur.attr), strconv.Itoa(cur.days), fmt.Sprintf("is not after %s = %d", prev.attr, prev.days),
				fmt.Sprintf("set %s later than %d: objects go IA, then Archive, then ColdArchive, then expire, each on a later day", cur.attr, prev.days),
				fmt.Errorf("%w: lifecycle steps out of order: %s = %d is not after %s = %d; objects go IA, then Archive, then ColdArchive, then expire, each on a later day",
					ErrInvalid, cur.attr, cur.days, prev.attr, prev.days))
		}
		var earliest int
		var why string
		switch prev.class {
		case ClassIA:
			earliest = prev.days + MinDaysIA
			why = fmt.Sprintf("IA has a minimum storage duration of %d days (counted here from the transition on day %d)", MinDaysIA, prev.days)
		case ClassArchive:
			earliest = MinDaysArchive
			why = fmt.Sprintf("Archive has a minimum storage duration of %d days from the last modification", MinDaysArchive)
		case ClassColdArchive:
			earliest = prev.days + MinDaysColdArchive
			why = fmt.Sprintf("ColdArchive has a minimum storage duration of %d days from the transition on day %d", MinDaysColdArchive, prev.days)
		}
		if cur.days < earliest {
			fix := fmt.Sprintf("set %s to %d or more", cur.attr, earliest)
			return planerr.New(lifecyclePath(cur.attr), strconv.Itoa(cur.days), why, fix,
				fmt.Errorf("%w: %s = %d comes too soon after %s = %d: %s; %s",
					ErrInvalid, cur.attr, cur.days, prev.attr, prev.days, why, fix))
		}
	}
	return nil
}

// String is a one-line summary for notes: "IA@30d, Archive@90d, expire@365d".
func (l Lifecycle) String() string {
	var parts []string
	for _, s := range l.steps() {
		name := s.class
		if name == "" {
			name = "expire"
		}
		parts = append(parts, fmt.Sprintf("%s@%dd", name, s.days))
	}
	return strings.Join(parts, ", ")
}
