package oss

import (
	"encoding/xml"
	"net/http"

	sdk "github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
)

// Bucket settings with simple get/put semantics: ACL, versioning, default
// encryption and Block Public Access.

func putBucketACL(c *call) *ossError {
	acl := c.r.Header.Get("x-oss-acl")
	if !validACL(acl) {
		return errInvalidArgument("x-oss-acl", acl, "no such bucket access control exists")
	}
	if e := c.withBucket(true, func(b *bucket) *ossError {
		if b.BlockPublicAccess && acl != aclPrivate {
			return errAccessDenied("Put public bucket acl is not allowed while Block Public Access is enabled.")
		}
		b.ACL = acl
		return nil
	}); e != nil {
		return e
	}
	return c.writeEmpty(http.StatusOK)
}

type accessControlPolicyXML struct {
	XMLName xml.Name `xml:"AccessControlPolicy"`
	Owner   ownerXML `xml:"Owner"`
	Grant   string   `xml:"AccessControlList>Grant"`
}

func getBucketACL(c *call) *ossError {
	out := accessControlPolicyXML{Owner: owner()}
	if e := c.withBucket(false, func(b *bucket) *ossError {
		out.Grant = b.ACL
		return nil
	}); e != nil {
		return e
	}
	return c.writeXML(out)
}

func putBucketVersioning(c *call) *ossError {
	var cfg sdk.VersioningConfiguration
	if e := c.readXML("VersioningConfiguration", &cfg); e != nil {
		return e
	}
	status := string(cfg.Status)
	if status != "Enabled" && status != "Suspended" {
		return errMalformedXML("VersioningConfiguration Status must be Enabled or Suspended")
	}
	if e := c.withBucket(true, func(b *bucket) *ossError {
		b.Versioning = status
		return nil
	}); e != nil {
		return e
	}
	return c.writeEmpty(http.StatusOK)
}

func getBucketVersioning(c *call) *ossError {
	// A bucket that never had versioning configured returns an empty
	// document, not "Suspended".
	out := struct {
		XMLName xml.Name `xml:"VersioningConfiguration"`
		Status  string   `xml:"Status,omitempty"`
	}{}
	if e := c.withBucket(false, func(b *bucket) *ossError {
		out.Status = b.Versioning
		return nil
	}); e != nil {
		return e
	}
	return c.writeXML(out)
}

// putBucketEncryption accepts AES256, SM4 and KMS (the only one taking a key
// id, and the only one allowing SM4 as the data encryption).
func putBucketEncryption(c *call) *ossError {
	var rule sdk.ServerSideEncryptionRule
	if e := c.readXML("ServerSideEncryptionRule", &rule); e != nil {
		return e
	}
	def := rule.ApplyServerSideEncryptionByDefault
	if def == nil || def.SSEAlgorithm == nil {
		return errMalformedXML("ApplyServerSideEncryptionByDefault/SSEAlgorithm is required")
	}
	alg := *def.SSEAlgorithm
	switch alg {
	case "AES256", "SM4":
		if deref(def.KMSMasterKeyID) != "" {
			return errInvalidArgument("KMSMasterKeyID", deref(def.KMSMasterKeyID),
				"KMSMasterKeyID is only allowed when SSEAlgorithm is KMS.")
		}
		if deref(def.KMSDataEncryption) != "" {
			return errInvalidArgument("KMSDataEncryption", deref(def.KMSDataEncryption),
				"KMSDataEncryption is only allowed when SSEAlgorithm is KMS.")
		}
	case "KMS":
		if d := deref(def.KMSDataEncryption); d != "" && d != "SM4" {
			return errInvalidArgument("KMSDataEncryption", d, "KMSDataEncryption must be SM4 when set.")
		}
	default:
		return errInvalidArgument("SSEAlgorithm", alg, "SSEAlgorithm must be AES256, KMS or SM4.")
	}
	if e := c.withBucket(true, func(b *bucket) *ossError {
		b.Encryption = def
		return nil
	}); e != nil {
		return e
	}
	return c.writeEmpty(http.StatusOK)
}

func getBucketEncryption(c *call) *ossError {
	var def *sdk.ApplyServerSideEncryptionByDefault
	if e := c.withBucket(false, func(b *bucket) *ossError {
		if b.Encryption == nil {
			e := newError(http.StatusNotFound, "NoSuchServerSideEncryptionRule",
				"The server side encryption configuration was not found")
			e.bucketName = b.Name
			return e
		}
		def = b.Encryption
		return nil
	}); e != nil {
		return e
	}
	return c.writeXML(struct {
		XMLName xml.Name   `xml:"ServerSideEncryptionRule"`
		Default sseRuleXML `xml:"ApplyServerSideEncryptionByDefault"`
	}{Default: sseRuleXML{
		SSEAlgorithm:      deref(def.SSEAlgorithm),
		KMSMasterKeyID:    deref(def.KMSMasterKeyID),
		KMSDataEncryption: deref(def.KMSDataEncryption),
	}})
}

func deleteBucketEncryption(c *call) *ossError {
	if e := c.withBucket(true, func(b *bucket) *ossError {
		b.Encryption = nil
		return nil
	}); e != nil {
		return e
	}
	return c.writeEmpty(http.StatusNoContent)
}

type publicAccessBlockXML struct {
	XMLName           xml.Name `xml:"PublicAccessBlockConfiguration"`
	BlockPublicAccess bool     `xml:"BlockPublicAccess"`
}

func putBucketPublicAccessBlock(c *call) *ossError {
	var cfg sdk.PublicAccessBlockConfiguration
	if e := c.readXML("PublicAccessBlockConfiguration", &cfg); e != nil {
		return e
	}
	if cfg.BlockPublicAccess == nil {
		return errMalformedXML("BlockPublicAccess is required")
	}
	if e := c.withBucket(true, func(b *bucket) *ossError {
		b.BlockPublicAccess = *cfg.BlockPublicAccess
		return nil
	}); e != nil {
		return e
	}
	return c.writeEmpty(http.StatusOK)
}

func getBucketPublicAccessBlock(c *call) *ossError {
	var out publicAccessBlockXML
	if e := c.withBucket(false, func(b *bucket) *ossError {
		out.BlockPublicAccess = b.BlockPublicAccess
		return nil
	}); e != nil {
		return e
	}
	return c.writeXML(out)
}

func deleteBucketPublicAccessBlock(c *call) *ossError {
	if e := c.withBucket(true, func(b *bucket) *ossError {
		b.BlockPublicAccess = false
		return nil
	}); e != nil {
		return e
	}
	return c.writeEmpty(http.StatusNoContent)
}
