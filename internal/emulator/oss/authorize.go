package oss

import "strings"

// authorize applies the bucket's policy to a signed request on a bucket that has one. OSS
// denies first: any matching Deny refuses, then a matching Allow grants, else the request is
// refused by default (https://help.aliyun.com/en/oss/user-guide/bucket-policy/). Who the
// policy applies to:
//
//   - The account's own key, the bucket owner, is allowed whatever the policy allows others:
//     a Principal of "*" without a Condition "applies only to users other than the bucket
//     owner" (same page); a Deny naming the account's id still refuses it.
//   - An STS key is a session of a RAM role. A bucket policy names it "arn:sts::<uid>:
//     assumed-role/<role-name>/<session-name>", names case-sensitive, * for any session
//     ("Scenario 4: Grant read-only access to specific RAM roles", same page). The emulator
//     models no RAM policies, so once a bucket has a policy it alone decides what a role may do
//     there; a bucket without one lets STS keys do anything, as before policies were modeled.
//
// Anonymous requests stay with the bucket and object ACLs (authorizeAnonymous).
func (c *call) authorize(op operation) *ossError {
	if c.anonymous || c.bucket == "" || op.name == "Unsupported" {
		return nil
	}
	c.h.mu.RLock()
	b := c.h.buckets[c.bucket]
	doc, region := "", ""
	if b != nil {
		doc, region = b.Policy, b.Region
	}
	c.h.mu.RUnlock()
	if doc == "" {
		return nil
	}
	p, e := parsePolicy([]byte(doc)) // PutBucketPolicy stored it, so it parses
	if e != nil {
		return e
	}
	resource := "acs:oss:" + region + ":" + OwnerID + ":" + c.bucket
	if c.hasKey {
		resource += "/" + c.key
	}
	owner := c.caller.Principal == ""
	principal := c.caller.Principal
	if owner {
		principal = OwnerID
	}
	allowed := false
	for _, st := range p.Statement {
		if !st.matches(principal, owner, policyAction(op.name), resource) {
			continue
		}
		if st.Effect == "Deny" {
			return errAccessDenied("You have no right to access this resource because of bucket policy.")
		}
		allowed = true
	}
	if owner || allowed {
		return nil
	}
	return errAccessDenied("You have no right to access this resource because of bucket policy.")
}

// matches: the statement names the principal, the action and the resource.
func (st policyStatement) matches(principal string, owner bool, action, resource string) bool {
	return st.namesPrincipal(principal, owner) && anyMatch(st.Action, action, true) && anyMatch(st.Resource, resource, false)
}

// namesPrincipal: an empty Principal list is ["*"]; "*" names everyone but the owner (no
// Condition is ever stored); any other entry is a pattern of the principal's name.
func (st policyStatement) namesPrincipal(principal string, owner bool) bool {
	list := *st.Principal
	if len(list) == 0 {
		list = stringList{"*"}
	}
	for _, p := range list {
		if p == "*" {
			if !owner {
				return true
			}
			continue
		}
		if wildcardMatch(p, principal, false) {
			return true
		}
	}
	return false
}

func anyMatch(patterns stringList, s string, foldCase bool) bool {
	for _, p := range patterns {
		if wildcardMatch(p, s, foldCase) {
			return true
		}
	}
	return false
}

// policyActions are the operations whose RAM action is not "oss:" and the operation's name
// (https://www.alibabacloud.com/help/en/oss/user-guide/authorization-syntax-and-elements):
// HeadObject and GetObjectMeta need oss:GetObject, a V2 listing oss:ListObjects, and the bucket
// tag operations are the ...BucketTagging actions.
var policyActions = map[string]string{
	"HeadObject":       "oss:GetObject",
	"GetObjectMeta":    "oss:GetObject",
	"ListObjectsV2":    "oss:ListObjects",
	"PutBucketTags":    "oss:PutBucketTagging",
	"GetBucketTags":    "oss:GetBucketTagging",
	"DeleteBucketTags": "oss:DeleteBucketTagging",
}

func policyAction(op string) string {
	if a, ok := policyActions[op]; ok {
		return a
	}
	return "oss:" + op
}

// wildcardMatch matches s against a policy pattern, whose one wildcard is * ("Supports the
// wildcard *"): any run of characters, / and : included. Action names are matched without
// regard to case, as RAM reads them.
func wildcardMatch(pattern, s string, foldCase bool) bool {
	if foldCase {
		pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	}
	// Iterative matching with one backtrack point: the last * seen.
	p, i, star, mark := 0, 0, -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p, mark = star+1, mark+1
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
