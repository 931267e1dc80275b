package ops

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// FailureEvent returns the invocation event kept in an object of a stream
// event source's S3 on-failure destination: the batch Lambda gave up on
// (retries or record age exhausted), as the function was invoked with it.
// For an S3 destination Lambda writes "the entire invocation record along
// with the metadata"
// (https://docs.aws.amazon.com/lambda/latest/dg/kinesis-on-failure-destination.html):
// the metadata (requestContext, responseContext, the KinesisBatchInfo or
// DDBStreamBatchInfo range) beside the "payload", the event, which is read
// here whether it is written as a JSON object or as a string holding one.
//
// Replaying the event through the consumer's handler (invoke the function
// with it, or call Handle) is harmless: each record whose fact completed is
// a Duplicate, so only the facts that never completed run, each once, in
// the order of its key; a record as old as the business window is refused
// as Expired, since its fact's record may be gone (settle it by hand).
func FailureEvent(object []byte) ([]byte, error) {
	var rec struct {
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(object, &rec); err != nil {
		return nil, fmt.Errorf("not an on-failure record: %w", err)
	}
	p := bytes.TrimSpace(rec.Payload)
	if len(p) == 0 || string(p) == "null" {
		return nil, errors.New("the on-failure record has no payload: it is not from an S3 destination (SQS and SNS destinations keep only the batch's range), or the batch was too large to keep")
	}
	if p[0] == '"' {
		var s string
		if err := json.Unmarshal(p, &s); err != nil {
			return nil, fmt.Errorf("payload: %w", err)
		}
		p = []byte(s)
	}
	var ev struct {
		Records []json.RawMessage `json:"Records"`
	}
	if err := json.Unmarshal(p, &ev); err != nil || ev.Records == nil {
		return nil, errors.New("the on-failure record's payload is not a stream event (no Records)")
	}
	return p, nil
}
