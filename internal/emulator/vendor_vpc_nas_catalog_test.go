package emulator

import (
	"strings"
	"testing"
)

// DeleteVpc names what still holds the VPC the way the vendor does.
func TestDeleteVpcDependencyCodes(t *testing.T) {
	e := newEnv(t, Config{BootTime: 1})
	f := e.network("10.0.0.0/16", "10.0.1.0/24")
	id := e.runOne(f)
	del := func() rpcAnswer {
		return e.rpc(versionVPC, "DeleteVpc", params{"RegionId": testRegion, "VpcId": f.vpcID})
	}
	wantAnswer(t, del(), 400, "DependencyViolation.Instance")
	wantAnswer(t, e.ecsCall("DeleteInstances", params{"InstanceId.1": id, "Force": "true"}), 200, "")
	wantAnswer(t, del(), 400, "DependencyViolation.VSwitch")
	wantAnswer(t, e.rpc(versionVPC, "DeleteVSwitch", params{"RegionId": testRegion, "VSwitchId": f.vswID}), 200, "")
	wantAnswer(t, del(), 400, "DependencyViolation.SecurityGroup")
	wantAnswer(t, e.ecsCall("DeleteSecurityGroup", params{"SecurityGroupId": f.sgID}), 200, "")
	wantAnswer(t, del(), 200, "")
}

// Extreme NAS file systems carry the "extreme-" prefix.
func TestExtremeNASIDs(t *testing.T) {
	e := newEnv(t, Config{})
	var fs struct{ FileSystemId string }
	decodeInto(t, e.rpc(versionNAS, "CreateFileSystem", params{"RegionId": testRegion, "FileSystemType": "extreme",
		"StorageType": "standard", "ProtocolType": "NFS", "ZoneId": testRegion + "-a", "Capacity": "100"}), &fs)
	if !strings.HasPrefix(fs.FileSystemId, "extreme-") {
		t.Fatalf("extreme file system id %q lacks the extreme- prefix", fs.FileSystemId)
	}
	var list struct {
		FileSystems struct {
			FileSystem []struct{ FileSystemId string }
		}
	}
	decodeInto(t, e.rpc(versionNAS, "DescribeFileSystems", params{"RegionId": testRegion, "FileSystemId": fs.FileSystemId}), &list)
	if len(list.FileSystems.FileSystem) != 1 {
		t.Fatalf("describe by id: %+v", list)
	}
}

// DescribePrice takes the vendor's PriceUnit values only (Hour, Month, Year).
func TestDescribePriceUnits(t *testing.T) {
	e := newEnv(t, Config{})
	for _, u := range []string{"Hour", "Month", "Year"} {
		wantAnswer(t, e.ecsCall("DescribePrice", params{"InstanceType": "ecs.gn6i-c4g1.xlarge", "PriceUnit": u}), 200, "")
	}
	wantAnswer(t, e.ecsCall("DescribePrice", params{"InstanceType": "ecs.gn6i-c4g1.xlarge", "PriceUnit": "Week"}), 400, "InvalidPriceUnit.ValueNotSupported")
}

// DescribeAvailableResource accepts every documented DestinationResource and ResourceType.
func TestDescribeAvailableResourceDocumentedValues(t *testing.T) {
	e := newEnv(t, Config{})
	for _, d := range []string{"Zone", "IoOptimized", "InstanceType", "Network", "ddh", "SystemDisk", "DataDisk"} {
		a := e.ecsCall("DescribeAvailableResource", params{"DestinationResource": d})
		var out struct {
			AvailableZones struct {
				AvailableZone []struct {
					AvailableResources struct{ AvailableResource []struct{ Type string } }
				}
			}
		}
		decodeInto(t, a, &out)
		if len(out.AvailableZones.AvailableZone) == 0 {
			t.Fatalf("%s: no zones", d)
		}
		if r := out.AvailableZones.AvailableZone[0].AvailableResources.AvailableResource; len(r) != 1 || r[0].Type != d {
			t.Fatalf("%s: resources %+v", d, r)
		}
	}
	for _, r := range []string{"instance", "disk", "reservedinstance", "ddh"} {
		wantAnswer(t, e.ecsCall("DescribeAvailableResource", params{"DestinationResource": "Zone", "ResourceType": r}), 200, "")
	}
	wantAnswer(t, e.ecsCall("DescribeAvailableResource", params{"DestinationResource": "Planet"}), 400, "InvalidParameter")
}
