// Package core is what every product of the emulator stands on and nothing else: the vendor's
// RPC error shape (Error), request parameters (Params), the table of served actions (Register,
// Route, Call) and the registry of record stores that make up the state file (RegisterStore,
// Stores). It imports no product package, so a product can be read, tested and moved without
// the others.
//
// # How products reach each other
//
// A product package (internal/emulator/sts, ...) owns its records, its handlers and its
// tests. It registers its actions with Register and its records with RegisterStore in its
// init; the top-level package internal/emulator is the assembly that imports every product
// and builds the Server.
//
// A product that needs another product's records imports that lower product package and reads
// its store (NAS finds a mount target's vSwitch with vpc.StoreIn(c.Stores).VSwitchIn). The order
// is the vendor's own layering: VPC at the bottom, ECS on VPC, NAS and SLB on VPC and ECS, ESS on
// ECS. A lower product that must react to a higher one (DeleteVSwitch refusing while a NAS mount
// target is in it) offers a small hook the higher product registers from its init
// (vpc.RegisterDependent, whose checks run in the vendor's order by rank), so no product imports
// one above it and there is no import cycle. ECS offers the VPC API its instances and its
// DeleteVpc checks that way (vpc.UseInstances, vpc.RegisterDependent), and tells VPC of a
// released instance (vpc.Store.ForgetInstance).
//
// Where the core can carry a contract between two products, it does, and neither imports the
// other: ESS launches and releases ECS instances, and SLB checks its backend servers, through
// the Compute that ECS registers (UseCompute, ECS); SLB forgets a released instance through
// WhenReleased; ECS draws spot launches from the spot stock table ESS keeps (UseSpotStock,
// SpotStock). What every product shares because the vendor's cloud does (one id sequence, the
// served regions and zones, asynchronous status and boot time from the clock) comes from the
// Server through Call.Env.
//
// # State file
//
// The state file's "db" object is flat: each store marshals to an object whose keys are
// spliced into it (MarshalStores) and each store reads its own keys back from the whole object
// (UnmarshalStores). A product moved into its own package therefore keeps the JSON keys it had
// before; internal/emulator's TestPreSplitStateFileLoads holds every layout to a state file
// written before the split.
package core
