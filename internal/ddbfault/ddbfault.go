// Package ddbfault holds DynamoDB's answers that no emulator here sends, for
// the transports that tests put in front of one (dynalite, kumo).
package ddbfault

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// ConflictMessage is the message DynamoDB gives ReplicatedWriteConflictException.
const ConflictMessage = "One or more items in this request are being modified by a request in another Region."

// ReplicatedWriteConflict is DynamoDB's answer to req, a write of an item of
// a multi-Region strongly consistent table that a request in another Region
// is modifying: status 400 and the exception with message, nothing applied.
// The body is as DynamoDB sends every error: the error's type in "__type"
// with the service's namespace (the SDK keeps what follows '#').
func ReplicatedWriteConflict(req *http.Request, message string) *http.Response {
	body, _ := json.Marshal(map[string]string{ // strings only: cannot fail
		"__type":  "com.amazonaws.dynamodb.v20120810#ReplicatedWriteConflictException",
		"message": message,
	})
	return &http.Response{
		StatusCode: http.StatusBadRequest,
		Status:     "400 Bad Request",
		Header:     http.Header{"Content-Type": []string{"application/x-amz-json-1.0"}},
		Body:       io.NopCloser(strings.NewReader(string(body))),
		Request:    req,
	}
}
