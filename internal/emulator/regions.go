package emulator

import "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"

// catalogRegions are the regions the emulator can serve (Config.Regions picks among them):
// cn-wulanchabu first (the GPU region the project targets), each with three zones. Every
// product answers per region; ECS's DescribeRegions and DescribeZones list them (core.Env).
var catalogRegions = []*core.Region{
	{ID: "cn-wulanchabu", LocalName: "华北6（乌兰察布）", Zones: []string{"cn-wulanchabu-a", "cn-wulanchabu-b", "cn-wulanchabu-c"}},
	{ID: "cn-beijing", LocalName: "华北2（北京）", Zones: []string{"cn-beijing-a", "cn-beijing-b", "cn-beijing-c"}},
	{ID: "cn-hangzhou", LocalName: "华东1（杭州）", Zones: []string{"cn-hangzhou-h", "cn-hangzhou-i", "cn-hangzhou-j"}},
	{ID: "cn-shanghai", LocalName: "华东2（上海）", Zones: []string{"cn-shanghai-e", "cn-shanghai-f", "cn-shanghai-g"}},
}

func (s *Server) zoneExists(region, zone string) bool {
	r := s.regions[region]
	return r != nil && contains(r.Zones, zone)
}

// servedRegions are the regions the Server serves, in catalog order.
func (s *Server) servedRegions() []core.Region {
	var out []core.Region
	for _, r := range catalogRegions {
		if s.regions[r.ID] != nil {
			out = append(out, *r)
		}
	}
	return out
}
