package oss

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// Bucket policies: PutBucketPolicy stores the JSON document as sent
// (https://www.alibabacloud.com/help/en/oss/developer-reference/putbucketpolicy), GetBucketPolicy
// answers it back, DeleteBucketPolicy removes it. The syntax is the vendor's
// (https://www.alibabacloud.com/help/en/oss/user-guide/authorization-syntax-and-elements):
// Version "1" and Statements of Effect, Action, Principal, Resource and an optional Condition.
// authorize.go applies it to each request.
//
// Modeled: Allow and Deny statements on Action, Principal and Resource with the * wildcard.
// Not modeled: Condition (acs:SourceIp, acs:SourceVpc, oss:Prefix, ...), refused with
// NotImplemented so no policy is stored that the emulator would apply differently from OSS;
// RAM policies of users and roles, which the emulator has none of.

// maxPolicySize: "The total size of all policies cannot exceed 16 KB" (EC 0030-00000001,
// https://help.aliyun.com/zh/oss/user-guide/0030-00000001).
const maxPolicySize = 16 << 10

// bucketPolicy is a policy document as the emulator reads it.
type bucketPolicy struct {
	Version   *string           `json:"Version"`
	Statement []policyStatement `json:"Statement"`
}

type policyStatement struct {
	Effect    string          `json:"Effect"`
	Action    stringList      `json:"Action"`
	Principal *stringList     `json:"Principal"`
	Resource  stringList      `json:"Resource"`
	Condition json.RawMessage `json:"Condition"`
}

// stringList is an element the vendor takes as one string or a list of them ("Action":
// "oss:*" and "Action": ["oss:GetObject"] both appear in its examples).
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte(`"`)) {
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*l = stringList{one}
		return nil
	}
	return json.Unmarshal(b, (*[]string)(l))
}

// errInvalidPolicy answers a document OSS would not store: "The policy is invalid", EC
// 0030-00000005 (https://help.aliyun.com/en/oss/user-guide/0030-00000005), whose example is a
// Version written as the number 1.
func errInvalidPolicy(detail string) *ossError {
	return newError(http.StatusBadRequest, "InvalidPolicyDocument", "Invalid Policy: %s", detail)
}

// parsePolicy reads and checks a document. Version must be the string "1" (EC 0030-00000002,
// https://help.aliyun.com/zh/oss/user-guide/0030-00000002); the document must be UTF-8 (EC
// 0030-00000004); every statement needs an Effect of Allow or Deny, an Action, a Resource and,
// in a bucket policy, a Principal ("Required for bucket policies"; an empty list is ["*"]).
func parsePolicy(doc []byte) (*bucketPolicy, *ossError) {
	if !utf8.Valid(doc) {
		return nil, errInvalidPolicy("the policy must be UTF-8.")
	}
	var p bucketPolicy
	if err := json.Unmarshal(doc, &p); err != nil {
		return nil, errInvalidPolicy("not a policy document: " + err.Error())
	}
	if p.Version == nil || *p.Version != "1" {
		return nil, errInvalidPolicy(`Version must be "1".`)
	}
	if len(p.Statement) == 0 {
		return nil, errInvalidPolicy("Statement is required.")
	}
	for _, st := range p.Statement {
		switch {
		case st.Effect != "Allow" && st.Effect != "Deny":
			return nil, errInvalidPolicy("Effect must be Allow or Deny.")
		case len(st.Action) == 0:
			return nil, errInvalidPolicy("Action is required.")
		case len(st.Resource) == 0:
			return nil, errInvalidPolicy("Resource is required.")
		case st.Principal == nil:
			return nil, errInvalidPolicy("Principal is required in a bucket policy.")
		case len(st.Condition) > 0 && string(st.Condition) != "null":
			return nil, newError(http.StatusNotImplemented, "NotImplemented",
				"The gpucluster emulator does not evaluate bucket policy Conditions; leave Condition out.")
		}
	}
	return &p, nil
}

func putBucketPolicy(c *call) *ossError {
	doc, e := c.readBody(maxXMLBody)
	if e != nil {
		return e
	}
	if len(doc) > maxPolicySize {
		return errInvalidPolicy("the policy must be smaller than 16 KB.")
	}
	if _, e := parsePolicy(doc); e != nil {
		return e
	}
	if e := c.withBucket(true, func(b *bucket) *ossError {
		b.Policy = string(doc)
		return nil
	}); e != nil {
		return e
	}
	return c.writeEmpty(http.StatusOK)
}

// getBucketPolicy answers the document as it was put; without one, NoSuchBucketPolicy (404),
// as GetBucketPolicy documents (https://www.alibabacloud.com/help/doc-detail/154887.htm).
func getBucketPolicy(c *call) *ossError {
	var doc string
	if e := c.withBucket(false, func(b *bucket) *ossError {
		if b.Policy == "" {
			e := newError(http.StatusNotFound, "NoSuchBucketPolicy", "The bucket policy does not exist.")
			e.bucketName = b.Name
			return e
		}
		doc = b.Policy
		return nil
	}); e != nil {
		return e
	}
	h := c.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(doc)))
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write([]byte(doc))
	return nil
}

func deleteBucketPolicy(c *call) *ossError {
	if e := c.withBucket(true, func(b *bucket) *ossError {
		b.Policy = ""
		return nil
	}); e != nil {
		return e
	}
	return c.writeEmpty(http.StatusNoContent)
}
