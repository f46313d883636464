package core

import (
	"reflect"
	"testing"
)

func TestParamsReadTheVendorsListForms(t *testing.T) {
	p := Params{"InstanceId.2": "b", "InstanceId.1": "a", "Ids": `["x","y"]`, "Tag.1.Key": "k", "Tag.1.Value": "v", "N": "x"}
	if got := p.List("InstanceId"); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("List = %v", got)
	}
	if got, _ := p.IDs("Ids", "InstanceId"); !reflect.DeepEqual(got, []string{"x", "y"}) {
		t.Errorf("IDs = %v", got)
	}
	if got, _ := p.Tags("Tag"); !reflect.DeepEqual(got, []Tag{{K: "k", V: "v"}}) {
		t.Errorf("Tags = %v", got)
	}
	if _, e := p.Int("N", 0); e == nil || e.Code != "InvalidParameter" {
		t.Errorf("Int of a non-number: %v", e)
	}
	if _, e := p.Required("Missing"); e == nil || e.Code != "MissingParameter" {
		t.Errorf("Required of an absent parameter: %v", e)
	}
}
