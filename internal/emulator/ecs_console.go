package emulator

import (
	"encoding/base64"
	"sync"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

func init() {
	register(versionECS, "GetInstanceConsoleOutput", route{fn: getInstanceConsoleOutput})
}

// consoleLogs are the instances' serial console outputs, which the emulator does not make
// itself: a node agent beside it plays each instance's boot and writes what the node's bootstrap
// would print (SetConsoleOutput). Without one an instance's console holds no bootstrap line, as
// an instance whose cloud-init has not run. They are not saved with the state: the agent writes
// them again every round.
type consoleLogs struct {
	mu   sync.Mutex
	logs map[string]consoleLog // by instance id
}

type consoleLog struct {
	output  string
	updated time.Time
}

// SetConsoleOutput replaces what instanceID's serial console shows ("" empties it); ECS
// GetInstanceConsoleOutput answers it, Base64-encoded as the vendor does.
func (s *Server) SetConsoleOutput(instanceID, output string) {
	s.console.mu.Lock()
	defer s.console.mu.Unlock()
	if output == "" {
		delete(s.console.logs, instanceID)
		return
	}
	if s.console.logs == nil {
		s.console.logs = map[string]consoleLog{}
	}
	s.console.logs[instanceID] = consoleLog{output: output, updated: s.now()}
}

// getInstanceConsoleOutput answers an instance's serial console output
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-getinstanceconsoleoutput):
// ConsoleOutput is Base64 and LastUpdateTime UTC; an instance that does not exist in the region
// is InvalidInstanceId.NotFound (404). RemoveSymbols (drop the escape characters) is accepted and
// changes nothing: the lines the agent writes have none.
func getInstanceConsoleOutput(c *call) (any, *apiError) {
	in, e := c.findInstance()
	if e != nil {
		return nil, e
	}
	if _, e := c.p.Bool("RemoveSymbols", false); e != nil {
		return nil, e
	}
	c.s.console.mu.Lock()
	l, ok := c.s.console.logs[in.ID]
	c.s.console.mu.Unlock()
	// Before any output, the console was last written when the instance was created.
	updated := time.Unix(0, in.Created)
	if ok {
		updated = l.updated
	}
	return &ecs.GetInstanceConsoleOutputResponse{RequestId: c.reqID, InstanceId: in.ID,
		ConsoleOutput: base64.StdEncoding.EncodeToString([]byte(l.output)), LastUpdateTime: updated.UTC().Format(timeFormat)}, nil
}
