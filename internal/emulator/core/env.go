package core

import "time"

// Env is what the Server offers a product's handler beyond the records in Stores: the things
// every product shares because the vendor's cloud does (one id sequence, one catalog of zones,
// one clock for asynchronous states).
type Env interface {
	// NewID makes a vendor-looking id (prefix, "-", 20 lowercase base-36 characters) from the
	// state's one sequence, so ids of every product sort by creation order. Needs the write lock.
	NewID(prefix string) string
	// NextSeq bumps the same sequence and answers it, for values that must be unique but are no
	// id (the public address of an internet load balancer). Needs the write lock.
	NextSeq() uint64
	// Seq answers the sequence's current value, the one the last NewID or NextSeq took (an EIP's
	// address is made from the value its id took).
	Seq() uint64
	// ZoneExists reports whether the Server serves zone in region.
	ZoneExists(region, zone string) bool
	// Regions answers the regions the Server serves, with their zones, in the catalog's order.
	Regions() []Region
	// AsyncStatus answers pending until half of Config.BootTime has passed since (unix
	// nanoseconds), done after: how the emulator derives an asynchronous status from time, so
	// nothing has to tick records along.
	AsyncStatus(since int64, now time.Time, pending, done string) string
	// BootTime is Config.BootTime: how long an instance takes from Pending to Running, and so
	// how long whatever waits on instances (a scaling activity) stays in progress.
	BootTime() time.Duration
	// KeyUser is the RAM user the Server's long-term AccessKey belongs to, or "" when it is the
	// account's own key (Config.KeyUser): what STS GetCallerIdentity answers for that key.
	KeyUser() string
}

// Region is one region the Server serves: its id, the name the vendor's DescribeRegions gives
// it, and its zones.
type Region struct {
	ID        string
	LocalName string
	Zones     []string
}
