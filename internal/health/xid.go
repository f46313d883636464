package health

import "slices"

// NVIDIA's XID errors: the driver's reports of GPU errors (in the kernel log as "NVRM: Xid",
// through NVML's event API, and as dcgm-exporter's DCGM_FI_DEV_XID_ERRORS), and what a node's
// health agent does about each. Meanings are NVIDIA's (URLXIDErrors and, for the memory errors,
// URLMemoryErrors); the action per code is this package's reading of them for a cloud instance,
// where a GPU that cannot be brought back is replaced with its instance rather than repaired.

// Sources of the XID table.
const (
	URLXIDErrors = "https://docs.nvidia.com/deploy/xid-errors/index.html"
	// URLMemoryErrors: row remapping and contained/uncontained ECC errors on A100 and later.
	URLMemoryErrors = "https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html"
)

// Action is what an XID asks of the node's operator.
type Action string

const (
	// ActionNone: the error is the application's (or cleans up after it); the GPU is sound and
	// stays in service.
	ActionNone Action = "none"
	// ActionReset: drain the GPU's work and reset it (nvidia-smi -r, or reboot the instance); it
	// returns to service when the reset clears the condition and the gate passes again.
	ActionReset Action = "reset"
	// ActionReplace: drain the node and replace its instance: the GPU is gone from the bus or has
	// no spare memory rows left, which no reset mends.
	ActionReplace Action = "replace"
	// ActionUnlisted: a code the table does not hold; the gate treats it as ActionReset and
	// reports it, so an operator adds it.
	ActionUnlisted Action = "unlisted"
)

// XID is one row: the code, NVIDIA's name for it and the action.
type XID struct {
	Code   int
	Name   string
	Action Action
	Source string
}

// xids is the table, by code.
var xids = []XID{
	{13, "Graphics Engine Exception (usually the application's: out-of-range access, illegal instruction)", ActionNone, URLXIDErrors},
	{31, "GPU memory page fault (usually the application's illegal address)", ActionNone, URLXIDErrors},
	{43, "GPU stopped processing (the application hit a software-induced fault; the GPU stays healthy)", ActionNone, URLXIDErrors},
	{45, "Preemptive cleanup, due to previous errors (a process was ended)", ActionNone, URLXIDErrors},
	{48, "Double Bit ECC Error: uncorrectable; the GPU must be reset", ActionReset, URLXIDErrors},
	{63, "ECC page retirement or row remapping recording event: takes effect at the next GPU reset", ActionReset, URLMemoryErrors},
	{64, "ECC page retirement or row remapper recording failure: no spare rows left", ActionReplace, URLMemoryErrors},
	{74, "NVLink Error: a link failed; reset the GPU, a link that fails again is hardware", ActionReset, URLXIDErrors},
	{79, "GPU has fallen off the bus: the GPU no longer answers on PCIe", ActionReplace, URLXIDErrors},
	{92, "High single-bit ECC error rate", ActionReset, URLXIDErrors},
	{94, "Contained ECC error: only the applications using the memory are affected; reset to remap the row", ActionReset, URLMemoryErrors},
	{95, "Uncontained ECC error: every application on the GPU is affected; the GPU must be reset", ActionReset, URLMemoryErrors},
	{119, "GSP RPC timeout: the GPU System Processor stopped answering the driver", ActionReset, URLXIDErrors},
	{120, "GSP error: the GPU System Processor reported an error", ActionReset, URLXIDErrors},
}

// XIDs is the table, by code; a copy.
func XIDs() []XID { return slices.Clone(xids) }

// LookupXID answers the row of code; false for a code the table does not hold.
func LookupXID(code int) (XID, bool) {
	i, ok := slices.BinarySearchFunc(xids, code, func(x XID, c int) int { return x.Code - c })
	if !ok {
		return XID{}, false
	}
	return xids[i], true
}

// ClassifyXID is the action for code: ActionUnlisted for a code not in the table (0 included:
// it is no XID).
func ClassifyXID(code int) Action {
	if x, ok := LookupXID(code); ok {
		return x.Action
	}
	return ActionUnlisted
}

// Drains says whether an action takes the GPU out of service.
func (a Action) Drains() bool { return a != ActionNone }
