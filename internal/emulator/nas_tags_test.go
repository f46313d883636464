package emulator

import (
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/nas"
)

func nasCreateFS(e *env, desc string) string {
	e.t.Helper()
	r := nas.CreateCreateFileSystemRequest()
	r.RegionId, r.FileSystemType, r.StorageType, r.ProtocolType, r.Description = testRegion, "standard", "Capacity", "NFS", desc
	resp, err := e.nas.CreateFileSystem(r)
	must(e.t, err)
	return resp.FileSystemId
}

func nasTag(e *env, typ string, ids []string, kv ...string) error {
	r := nas.CreateTagResourcesRequest()
	r.RegionId, r.ResourceType, r.ResourceId = testRegion, typ, &ids
	var tags []nas.TagResourcesTag
	for i := 0; i+1 < len(kv); i += 2 {
		tags = append(tags, nas.TagResourcesTag{Key: kv[i], Value: kv[i+1]})
	}
	r.Tag = &tags
	_, err := e.nas.TagResources(r)
	return err
}

func nasUntag(e *env, ids []string, all bool, keys ...string) error {
	r := nas.CreateUntagResourcesRequest()
	r.RegionId, r.ResourceType, r.ResourceId = testRegion, "filesystem", &ids
	if len(keys) > 0 {
		r.TagKey = &keys
	}
	if all {
		r.All = requests.NewBoolean(true)
	}
	_, err := e.nas.UntagResources(r)
	return err
}

// nasDescribeTagged lists file systems by Tag.N filters (key, value pairs; "" value = any) and
// returns id -> tags as DescribeFileSystems reports them.
func nasDescribeTagged(e *env, kv ...string) map[string]map[string]string {
	e.t.Helper()
	r := nas.CreateDescribeFileSystemsRequest()
	r.RegionId = testRegion
	if len(kv) > 0 {
		var tags []nas.DescribeFileSystemsTag
		for i := 0; i+1 < len(kv); i += 2 {
			tags = append(tags, nas.DescribeFileSystemsTag{Key: kv[i], Value: kv[i+1]})
		}
		r.Tag = &tags
	}
	resp, err := e.nas.DescribeFileSystems(r)
	must(e.t, err)
	out := map[string]map[string]string{}
	for _, fs := range resp.FileSystems.FileSystem {
		m := map[string]string{}
		for _, t := range fs.Tags.Tag {
			m[t.Key] = t.Value
		}
		out[fs.FileSystemId] = m
	}
	return out
}

func nasListTags(e *env, ids []string, kv ...string) ([]string, error) {
	var rows []string
	token := ""
	for {
		r := nas.CreateListTagResourcesRequest()
		r.RegionId, r.ResourceType, r.NextToken = testRegion, "filesystem", token
		if len(ids) > 0 {
			r.ResourceId = &ids
		}
		if len(kv) > 0 {
			var tags []nas.ListTagResourcesTag
			for i := 0; i+1 < len(kv); i += 2 {
				tags = append(tags, nas.ListTagResourcesTag{Key: kv[i], Value: kv[i+1]})
			}
			r.Tag = &tags
		}
		resp, err := e.nas.ListTagResources(r)
		if err != nil {
			return nil, err
		}
		for _, t := range resp.TagResources.TagResource {
			rows = append(rows, fmt.Sprintf("%s %s %s=%s", t.ResourceType, t.ResourceId, t.TagKey, t.TagValue))
		}
		if resp.NextToken == "" {
			sort.Strings(rows)
			return rows, nil
		}
		token = resp.NextToken
	}
}

func TestNASTagResources(t *testing.T) {
	e := newEnv(t, Config{})
	a, b := nasCreateFS(e, "a"), nasCreateFS(e, "b")

	must(t, nasTag(e, "filesystem", []string{a, b}, "gpucluster:managed-by", "gpucluster", "team", "md"))
	must(t, nasTag(e, "filesystem", []string{a}, "gpucluster:storage-tier", "hot-data", "team", "cfd"))

	got := nasDescribeTagged(e)
	want := map[string]map[string]string{
		a: {"gpucluster:managed-by": "gpucluster", "team": "cfd", "gpucluster:storage-tier": "hot-data"},
		b: {"gpucluster:managed-by": "gpucluster", "team": "md"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DescribeFileSystems tags:\n got %v\nwant %v", got, want)
	}
	// Tag.N filters DescribeFileSystems: every pair must match; an empty value matches any.
	if got := nasDescribeTagged(e, "gpucluster:storage-tier", "hot-data"); len(got) != 1 || got[a] == nil {
		t.Fatalf("filter by tier tag: %v", got)
	}
	if got := nasDescribeTagged(e, "gpucluster:managed-by", "", "team", "md"); len(got) != 1 || got[b] == nil {
		t.Fatalf("filter by two tags: %v", got)
	}
	if got := nasDescribeTagged(e, "gpucluster:storage-tier", "other"); len(got) != 0 {
		t.Fatalf("filter that matches nothing: %v", got)
	}

	rows, err := nasListTags(e, []string{a})
	must(t, err)
	wantRows := []string{
		"filesystem " + a + " gpucluster:managed-by=gpucluster",
		"filesystem " + a + " gpucluster:storage-tier=hot-data",
		"filesystem " + a + " team=cfd",
	}
	if !reflect.DeepEqual(rows, wantRows) {
		t.Fatalf("ListTagResources by id:\n got %v\nwant %v", rows, wantRows)
	}
	rows, err = nasListTags(e, nil, "team", "md")
	must(t, err)
	if len(rows) != 2 || rows[0] != "filesystem "+b+" gpucluster:managed-by=gpucluster" {
		t.Fatalf("ListTagResources by tag: %v", rows)
	}
	// An id that does not exist is left out of a listing, not refused.
	rows, err = nasListTags(e, []string{"1ffffffff0"})
	must(t, err)
	if len(rows) != 0 {
		t.Fatalf("ListTagResources of a missing id: %v", rows)
	}
	// Neither ids nor tags: every tagged file system, as the vendor's model requires only
	// ResourceType.
	rows, err = nasListTags(e, nil)
	must(t, err)
	if len(rows) == 0 {
		t.Fatalf("ListTagResources with ResourceType only listed nothing")
	}

	must(t, nasUntag(e, []string{a}, false, "team", "not-there"))
	must(t, nasUntag(e, []string{b}, true))
	got = nasDescribeTagged(e)
	want = map[string]map[string]string{
		a: {"gpucluster:managed-by": "gpucluster", "gpucluster:storage-tier": "hot-data"},
		b: {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after untag:\n got %v\nwant %v", got, want)
	}

	// Vendor errors.
	wantCode(t, nasTag(e, "instance", []string{a}, "k", "v"), "InvalidResourceType.NotFound")
	wantCode(t, nasTag(e, "filesystem", []string{a, "1ffffffff0"}, "k", "v"), "InvalidResourceId.NotFound")
	wantCode(t, nasTag(e, "filesystem", []string{a}, "aliyun:reserved", "v"), "InvalidTagKey.Malformed")
	wantCode(t, nasTag(e, "filesystem", []string{a}), "MissingParameter")
	var many []string
	for i := range 19 {
		many = append(many, fmt.Sprintf("k%02d", i), "v")
	}
	wantCode(t, nasTag(e, "filesystem", []string{a}, many...), "InvalidTagCount") // 2 + 19 > 20
	// All or nothing: the failed calls changed nothing.
	if got := nasDescribeTagged(e); !reflect.DeepEqual(got, want) {
		t.Fatalf("failed calls changed tags: %v", got)
	}

	// Tags go with the file system.
	d := nas.CreateDeleteFileSystemRequest()
	d.RegionId, d.FileSystemId = testRegion, a
	_, err = e.nas.DeleteFileSystem(d)
	must(t, err)
	rows, err = nasListTags(e, nil, "gpucluster:managed-by", "")
	must(t, err)
	if len(rows) != 0 {
		t.Fatalf("tags of a deleted file system still listed: %v", rows)
	}
}
