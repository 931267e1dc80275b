package step

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// KeyFunc names the business fact a state input carries ("order-42"): the
// same for every execution, retry or redrive of the fact, and never the
// execution's ARN or name, a task token or an attempt number, which differ
// between two executions of one fact. An error, or an empty key, is bad
// input (ErrorBadInput).
type KeyFunc func(input json.RawMessage) (string, error)

// Field returns the KeyFunc that reads the fact's key from the field of the
// state input at path, dotted for nested objects ("orderId",
// "order.id"): a string, or a number as written. It is the way a contract
// names the key (Powertools' JMESPath, reduced to the one form a key needs).
func Field(path string) KeyFunc {
	parts := strings.Split(path, ".")
	return func(input json.RawMessage) (string, error) {
		v := input
		for _, name := range parts {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(v, &obj); err != nil || obj == nil {
				return "", fmt.Errorf("the state input has no object holding %q (field %q)", name, path)
			}
			var ok bool
			if v, ok = obj[name]; !ok {
				return "", fmt.Errorf("the state input has no field %q", path)
			}
		}
		return scalar(v, path)
	}
}

// scalar returns a JSON string's value or a number's text.
func scalar(v json.RawMessage, path string) (string, error) {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", fmt.Errorf("field %q: %w", path, err)
		}
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil || n == "" { // null leaves n empty
		return "", fmt.Errorf("field %q is %s, not a string or a number", path, v)
	}
	return n.String(), nil
}
