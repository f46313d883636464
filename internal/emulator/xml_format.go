package emulator

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// wantsXML reports whether an RPC request asked for Format=XML (JSON is the default).
func wantsXML(p params) bool { return strings.EqualFold(p["Format"], "XML") }

// jsonToXML renders a JSON answer the way the vendor renders the same answer as XML: the
// document element is <ActionResponse>, objects become nested elements, and a list repeats its
// element once per entry with no wrapper of its own (so {"Instances":{"Instance":[a,b]}} is
// <Instances><Instance>a</Instance><Instance>b</Instance></Instances>), the layout the SDK
// response models' xml tags describe. It walks the JSON tokens so keys keep their order.
func jsonToXML(root string, body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var out bytes.Buffer
	out.WriteString(xml.Header)
	if err := xmlValue(dec, &out, root); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func xmlValue(dec *json.Decoder, out *bytes.Buffer, name string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			out.WriteString("<" + name + ">")
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				if err := xmlValue(dec, out, k.(string)); err != nil {
					return err
				}
			}
			out.WriteString("</" + name + ">")
		case '[':
			for dec.More() {
				if err := xmlValue(dec, out, name); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("unexpected %v", t)
		}
		_, err = dec.Token() // the closing delimiter
		return err
	case nil:
		out.WriteString("<" + name + "/>")
	default:
		out.WriteString("<" + name + ">")
		if err := xml.EscapeText(out, []byte(fmt.Sprint(t))); err != nil {
			return err
		}
		out.WriteString("</" + name + ">")
	}
	return nil
}

// writeAPIErrorXML is writeAPIError for a request that asked for XML: the vendor's <Error> document.
func writeAPIErrorXML(w http.ResponseWriter, e *apiError, requestID, host string) {
	doc := struct {
		XMLName xml.Name `xml:"Error"`
		errorBody
	}{errorBody: errorBody{RequestId: requestID, HostId: host, Code: e.Code, Message: e.Message,
		Recommend: "https://api.aliyun.com/troubleshoot?q=" + e.Code}}
	body, _ := xml.Marshal(doc)
	w.Header().Set("Content-Type", "text/xml;charset=utf-8")
	w.WriteHeader(e.Status)
	_, _ = io.WriteString(w, xml.Header)
	_, _ = w.Write(body)
}
