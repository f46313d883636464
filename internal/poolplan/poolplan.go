// Package poolplan decides how a node pool's instances are asked for: how many batches, in
// which zones and deployment sets, under which idempotency tokens, and which nodes go first when a
// pool shrinks or rolls. Pure logic, no I/O, so the rules that protect a thousand-node apply are
// tested without a cloud.
package poolplan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// MaxBatch is what one RunInstances call may ask for (Amount and MinAmount 1-100).
const MaxBatch = 100

// Batch is one RunInstances call.
type Batch struct {
	Index           int
	Amount          int
	DeploymentSetID string
}

// Slot is a deployment set with room left in it.
type Slot struct {
	DeploymentSetID string
	Free            int
}

// Split cuts want into batches of at most MaxBatch. With slots (low-latency placement), each batch
// fits in one deployment set's free room, so a pool of 50 in sets of 20 becomes 20 + 20 + 10;
// asking for more than the sets hold is an error that says how many sets are missing.
func Split(want int, slots []Slot) ([]Batch, error) {
	if want <= 0 {
		return nil, nil
	}
	var out []Batch
	if len(slots) == 0 {
		for i := 0; want > 0; i++ {
			n := min(want, MaxBatch)
			out = append(out, Batch{Index: i, Amount: n})
			want -= n
		}
		return out, nil
	}
	room := 0
	for _, s := range slots {
		room += max(0, s.Free)
	}
	if room < want {
		// The pool's size is what asks for the nodes; the fix is on the network it names.
		return nil, planerr.New("size", strconv.Itoa(want), fmt.Sprintf("the network's placement groups have room for %d more nodes", room),
			"raise placement_groups on the network",
			fmt.Errorf("the network's placement groups have room for %d more nodes, %d are needed: raise placement_groups on the network", room, want))
	}
	i := 0
	for _, s := range slots {
		free := max(0, s.Free)
		for free > 0 && want > 0 {
			n := min(free, want, MaxBatch)
			out = append(out, Batch{Index: i, Amount: n, DeploymentSetID: s.DeploymentSetID})
			i++
			free -= n
			want -= n
		}
	}
	return out, nil
}

// Generation fingerprints one grow of a pool: the operation it belongs to and the set of
// instances the pool already has. It goes into every batch's ClientToken (cloud.ClientToken over pool, generation, round and
// batch), so a resent call within one
// grow carries the same token and is answered idempotently, while any other grow never collides
// with an earlier request's token (the service would answer the old call's instances, which may
// be long deleted, or refuse the token). The instance set alone is not enough: a pool whose nodes
// are all gone (a roll wave that replaces every node, or nodes deleted behind Terraform's back)
// has the same empty set it had when it was created. operation tells those apart; it must be
// unique per grow, such as a per-update random id plus the wave number.
func Generation(operation string, existingIDs []string) string {
	ids := slices.Clone(existingIDs)
	sort.Strings(ids)
	sum := sha256.Sum256([]byte(operation + "\x00" + strings.Join(ids, ",")))
	return hex.EncodeToString(sum[:4])
}

// Try is one (zone, instance type) pair in fallback order.
type Try struct {
	Zone         string
	InstanceType string
}

// Tries lists the pairs to try, zones first: the pool stays on its best instance type in another
// zone before it settles for a lesser type. Fallback types come only when allowed.
func Tries(zones, types []string, allowTypeFallback bool) []Try {
	if !allowTypeFallback && len(types) > 1 {
		types = types[:1]
	}
	out := make([]Try, 0, len(zones)*len(types))
	for _, t := range types {
		for _, z := range zones {
			out = append(out, Try{Zone: z, InstanceType: t})
		}
	}
	return out
}

// Node is what the shrink and roll decisions look at.
type Node struct {
	ID           string
	CreationTime string
	Outdated     bool
}

// ScaleDownVictims returns the n nodes to remove: the newest first, so the nodes that have been
// up longest (warm caches, finished bootstrap) stay.
func ScaleDownVictims(nodes []Node, n int) []string {
	if n <= 0 {
		return nil
	}
	sorted := slices.Clone(nodes)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].CreationTime != sorted[j].CreationTime {
			return sorted[i].CreationTime > sorted[j].CreationTime
		}
		return sorted[i].ID > sorted[j].ID
	})
	n = min(n, len(sorted))
	out := make([]string, 0, n)
	for _, nd := range sorted[:n] {
		out = append(out, nd.ID)
	}
	return out
}

// RollWaves groups the outdated nodes into waves of at most maxUnavailable, oldest first; each
// wave is deleted and replaced before the next starts, so no more than maxUnavailable nodes are
// ever down at once.
func RollWaves(nodes []Node, maxUnavailable int) [][]string {
	if maxUnavailable < 1 {
		maxUnavailable = 1
	}
	var outdated []Node
	for _, n := range nodes {
		if n.Outdated {
			outdated = append(outdated, n)
		}
	}
	sort.SliceStable(outdated, func(i, j int) bool {
		if outdated[i].CreationTime != outdated[j].CreationTime {
			return outdated[i].CreationTime < outdated[j].CreationTime
		}
		return outdated[i].ID < outdated[j].ID
	})
	var waves [][]string
	for chunk := range slices.Chunk(outdated, maxUnavailable) {
		ids := make([]string, 0, len(chunk))
		for _, n := range chunk {
			ids = append(ids, n.ID)
		}
		waves = append(waves, ids)
	}
	return waves
}

// SpecHash fingerprints what a node was built from (instance type, image, disks, user data...).
// Nodes carry it as a tag; a node whose hash differs from the plan's is outdated and is rolled.
func SpecHash(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:6])
}
