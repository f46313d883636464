package ecs

import (
	"encoding/base64"
	"sync"
	"time"

	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	core.Register(Version, "GetInstanceConsoleOutput", core.Route{Fn: handle(getInstanceConsoleOutput)})
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

// SetConsoleOutput replaces what instanceID's serial console shows ("" empties it), as written
// at now; GetInstanceConsoleOutput answers it, Base64-encoded as the vendor does. The consoles
// have their own lock: a node agent writes them without the Server's state lock.
func (d *Store) SetConsoleOutput(instanceID, output string, now time.Time) {
	d.console.mu.Lock()
	defer d.console.mu.Unlock()
	if output == "" {
		delete(d.console.logs, instanceID)
		return
	}
	if d.console.logs == nil {
		d.console.logs = map[string]consoleLog{}
	}
	d.console.logs[instanceID] = consoleLog{output: output, updated: now}
}

// getInstanceConsoleOutput answers an instance's serial console output
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-getinstanceconsoleoutput):
// ConsoleOutput is Base64 and LastUpdateTime UTC; an instance that does not exist in the region
// is InvalidInstanceId.NotFound (404). RemoveSymbols (drop the escape characters) is accepted and
// changes nothing: the lines the agent writes have none.
func getInstanceConsoleOutput(c *call) (any, *core.Error) {
	in, e := c.findInstance()
	if e != nil {
		return nil, e
	}
	if _, e := c.P.Bool("RemoveSymbols", false); e != nil {
		return nil, e
	}
	c.st.console.mu.Lock()
	l, ok := c.st.console.logs[in.ID]
	c.st.console.mu.Unlock()
	// Before any output, the console was last written when the instance was created.
	updated := time.Unix(0, in.Created)
	if ok {
		updated = l.updated
	}
	return &ecssdk.GetInstanceConsoleOutputResponse{RequestId: c.ReqID, InstanceId: in.ID,
		ConsoleOutput: base64.StdEncoding.EncodeToString([]byte(l.output)), LastUpdateTime: updated.UTC().Format(core.TimeFormat)}, nil
}
