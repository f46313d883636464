package emulator

import emuecs "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/ecs"

// PendingCommand is a Cloud Assistant command an instance's guest has yet to run (RunCommand).
type PendingCommand = emuecs.PendingCommand

// PendingCommands lists the Cloud Assistant commands still running on live Running instances,
// oldest first, for a model of the guest such as the node agent; commands whose instance stopped
// or went meanwhile are finished as the vendor reports them.
func (s *Server) PendingCommands() []PendingCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.adminCall(s.now())
	c.ReqID, c.Action = newRequestID(), "PendingCommands"
	out, changed := emuecs.PendingCommands(c)
	if changed { // the node agent asks every tick: save the state only when a record moved
		s.markDirty()
	}
	return out
}

// FinishCommand is the guest's outcome of a Cloud Assistant command on one instance: its exit
// code and output, as DescribeInvocationResults then answers them.
func (s *Server) FinishCommand(invokeID, instanceID string, exitCode int, output string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.adminCall(s.now())
	c.ReqID, c.Action = newRequestID(), "FinishCommand"
	if emuecs.FinishCommand(c, invokeID, instanceID, exitCode, output) {
		s.markDirty()
	}
}
