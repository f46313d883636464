package core

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
)

// ErrorBody is the vendor's JSON error document.
type ErrorBody struct {
	RequestId string `json:"RequestId"`
	HostId    string `json:"HostId"`
	Code      string `json:"Code"`
	Message   string `json:"Message"`
	Recommend string `json:"Recommend"`
}

// WriteError answers e in the vendor's JSON error document.
func WriteError(w http.ResponseWriter, e *Error, requestID, host string) {
	body, _ := json.Marshal(ErrorBody{
		RequestId: requestID,
		HostId:    host,
		Code:      e.Code,
		Message:   e.Message,
		Recommend: "https://api.aliyun.com/troubleshoot?q=" + e.Code,
	})
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

// NewRequestID makes a vendor-looking RequestId (a random UUID in upper case).
func NewRequestID() string {
	a, b := rand.Uint64(), rand.Uint64()
	return fmt.Sprintf("%08X-%04X-%04X-%04X-%012X", uint32(a>>32), uint16(a>>16), uint16(a), uint16(b>>48), b&0xffffffffffff)
}
