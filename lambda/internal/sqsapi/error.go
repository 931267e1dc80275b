package sqsapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/smithy-go"
)

// Error is an error SQS answered. It is a smithy.APIError, with the code an
// SDK client gives it (ErrorCode), and has the HTTP status (HTTPStatusCode),
// which the SDK's retryers read: throttling and 5xx are retried.
type Error struct {
	// Action is the action that failed ("ChangeMessageVisibility").
	Action string
	// StatusCode is the answer's HTTP status.
	StatusCode int
	// Type is the error's shape, the answer's __type (or X-Amzn-ErrorType)
	// without its namespace: "QueueDoesNotExist".
	Type string
	// QueryCode is the query protocol's name of the error, which SQS sends
	// in X-Amzn-Query-Error: "AWS.SimpleQueueService.NonExistentQueue".
	QueryCode string
	// Message is the answer's message.
	Message string
	// Fault is whose fault the error is (Sender: the caller's, Receiver:
	// the service's), from X-Amzn-Query-Error.
	Fault smithy.ErrorFault
	// RequestID is the answer's x-amzn-RequestId.
	RequestID string
}

// Error names the code (and the type, when it differs), the message, the
// HTTP status and the request: "AWS.SimpleQueueService.NonExistentQueue
// (QueueDoesNotExist): The specified queue does not exist. (HTTP 400,
// request 6691…)". The caller names the action and the queue.
func (e *Error) Error() string {
	code := e.ErrorCode()
	if e.Type != code {
		code += " (" + e.Type + ")"
	}
	return fmt.Sprintf("%s: %s (HTTP %d, request %s)", code, e.Message, e.StatusCode, e.RequestID)
}

// ErrorCode is the error's code as an SDK client reports it: the query
// code when SQS sent one, else the type.
func (e *Error) ErrorCode() string {
	if e.QueryCode != "" {
		return e.QueryCode
	}
	return e.Type
}

// ErrorMessage is the answer's message.
func (e *Error) ErrorMessage() string { return e.Message }

// ErrorFault is whose fault the error is.
func (e *Error) ErrorFault() smithy.ErrorFault { return e.Fault }

// HTTPStatusCode is the answer's HTTP status.
func (e *Error) HTTPStatusCode() int { return e.StatusCode }

// errorOf reads the error of an answer with status resp.StatusCode and body
// body, as the SDK's AWS JSON protocol reads it: the type from
// X-Amzn-ErrorType or the body's __type (or code), namespace and suffix
// cut; the message from the body's message (or Message); the query code and
// fault from X-Amzn-Query-Error ("AWS.SimpleQueueService.NonExistentQueue;Sender").
// A body that is not JSON (a proxy's page) is quoted as the message.
func errorOf(action string, resp *http.Response, body []byte) *Error {
	e := &Error{Action: action, StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Amzn-Requestid")}
	var b struct {
		Type     string `json:"__type"`
		Code     string `json:"code"`
		Message  string `json:"message"`
		Message2 string `json:"Message"`
	}
	if json.Unmarshal(body, &b) != nil {
		b.Message = fmt.Sprintf("%.200q", body)
	}
	e.Type = sanitizeType(firstOf(resp.Header.Get("X-Amzn-Errortype"), b.Type, b.Code, http.StatusText(resp.StatusCode)))
	e.Message = firstOf(b.Message, b.Message2)
	if code, fault, ok := strings.Cut(resp.Header.Get("X-Amzn-Query-Error"), ";"); ok {
		e.QueryCode = code
		switch fault {
		case "Sender":
			e.Fault = smithy.FaultClient
		case "Receiver":
			e.Fault = smithy.FaultServer
		}
	}
	return e
}

// sanitizeType cuts a type's namespace ("com.amazonaws.sqs#") and what
// follows a colon (a URL some services append), as the SDK does.
func sanitizeType(t string) string {
	if i := strings.IndexByte(t, ':'); i >= 0 {
		t = t[:i]
	}
	if i := strings.IndexByte(t, '#'); i >= 0 {
		t = t[i+1:]
	}
	return t
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
