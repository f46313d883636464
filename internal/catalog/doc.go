// Package catalog is the provider's knowledge of Alibaba Cloud GPU compute:
// GPU models, instance families and types, the three research scenarios,
// ESSD disk rules, instance selection and plan-time checks. It is pure Go:
// no I/O, no Terraform types, standard library only.
//
// Every figure is one a vendor publishes or a scenario target this project
// sets; SOURCES.md (next to this file) lists them all with the vendor pages they
// come from, and each table file cites its section there. Where the vendor does
// not state a figure the catalog
// records it as unknown (GPUModel.Unstated, Tristate Unknown, or a 0 documented
// as "not stated") and checks report that instead of guessing.
//
// # Data (one table file per concern)
//
//	gpus.go            GPUModels(), GPUModelNames()                      SOURCES.md §1 datasheet table
//	instance_types.go  InstanceTypes(), GPUInstanceTypes(),              SOURCES.md §1 family table, §3
//	                   CPUInstanceTypes() (g7/c7 control planes),
//	                   Families(), FamilyTypes(family), InstanceType.Model()
//	scenarios.go       Scenarios(), ScenarioNames()                      SOURCES.md §2
//	disks.go           ESSDLevels(), DiskCategories(), CheckDisk,        SOURCES.md §3
//	                   DiskPerformance, AutoPLMaxProvisionedIOPS
//
// # Lookups and parsing
//
//	LookupScenario(name) (Scenario, error)
//	LookupInstanceType(name) (InstanceType, bool)   // with or without "ecs."
//	ParseInstanceType(name) (InstanceType, error)   // error lists the family's sizes
//	ParseGPUModel(s) (GPUModel, error)              // case-insensitive aliases
//	MapGPUModel(s) (ModelMapping, error)            // requested model -> families
//
// Requested models with no family of that name map honestly (MapGPUModel):
// H100 -> gn8v / ebmgn8v with a warning that FP64 is far below H100; A40 ->
// gn8is (L20) then gn7i (A10) with a warning; V100S -> gn6e then gn6v with a
// warning; bare "A100" -> the 80 GB families (gn7e, ebmgn7e, ebmgn7ex,
// sccgn7ex) then gn7 (40 GB). Families whose GPU the vendor does not name
// (gn7, gn7e, gn8v, ebm*, scc*) keep that wording in
// InstanceType.GPUVendorName and have GPUModelStated false; their GPU field
// points at the datasheet model of the same class, used as an estimate.
//
// # Selection and checks
//
//	Select(SelectRequest) ([]Candidate, []Finding, error)
//	Requirements(scenario, instanceType, nodes) []Requirement
//	InstanceTypeFor(gpuModel, gpusPerNode) (InstanceType, error)
//	Check(scenario, instanceType, CheckOptions) ([]Finding, error)
//
// Select filters and ranks (the order is documented on Select): first on the
// scenario's requirements measured with the figures (Requirements: met,
// missed, unknown), then on published figures only (Scenario.RankBy; the
// catalog's model order breaks ties last, never before a figure). With
// SelectRequest.Availability, what the region sells decides what is offered
// and a fallback from the first choice is reported. Check reports
// Findings with a Severity (error, warning, info), a stable Code, the
// requirement, the measured value and a hint. Errors mean "cannot work" and
// exclude a type from selection; warnings mean "works but misses the
// scenario's target". The scenarios' recommended models (A40/A10 for molecular
// dynamics, T4 for engineering simulation) contradict the scenarios' own
// requirements; Select reports that as a matrix_contradiction warning and
// Check reports the individual shortfalls as warnings.
//
// Errors returned wrap ErrUnknownGPUModel, ErrUnknownScenario,
// ErrUnknownInstanceType, ErrGPUCountNotOffered, ErrNoCandidate or
// ErrInvalidDisk, and list the values that exist.
//
// # Decisions where the vendor is silent
//
//   - "FP64 worth using" is >= 5 TFLOPS (Scenario.MinFP64TFLOPS): the
//     datasheet's HPC parts have 7.8 and more, the others 1 or less.
//   - FP64, memory bandwidth, GPU link or ECC not stated -> warning for a
//     requirement (or info for ECC), never a pass.
//   - ECC is stated only for A40 (NVIDIA); every other model has ECC Unknown
//     and engineering_simulation reports it as info.
//   - A30 (gn7s) figures other than 24 GB are not published: unknown.
//   - ERI counts are stated only for ebmgn7ex (2); other ERI types have
//     ERIQuantity 0 (= supported, count not stated).
//   - sccgn7ex is bare metal: the vendor builds SCC on ECS Bare Metal.
//   - A derived FP64 figure (A10, A40, T4) can decide that a requirement is
//     missed, never that it is met, and never ranks a type.
//   - The ai_training network target (100 Gbit/s with RDMA) is measured on
//     every candidate whatever the node count: a node type is sized for the
//     cluster it joins.
//   - Without GPUsPerNode, ai_training prefers 8 GPUs per node (largest NVLink
//     domain); other scenarios prefer the smallest size.
//   - Molecular dynamics shortfalls of the scenario's own recommended models (A10, A40) are
//     warnings, not errors, so the matrix stays usable but never silent.
//   - g7 / c7 network bandwidth and ERI support are not stated (0 / false).
package catalog
