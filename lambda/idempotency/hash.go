package idempotency

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// maxJSONDepth bounds the nesting of a payload that is hashed, so that a
// hostile body cannot exhaust the stack.
const maxJSONDepth = 64

// hasher computes the payload hash: SHA-256 of the canonical JSON (objects
// with sorted keys, no insignificant whitespace) after removing the ignored
// fields.
type hasher struct {
	ignore [][]string // dotted paths, split
}

func newHasher(ignore []string) hasher {
	h := hasher{}
	for _, p := range ignore {
		if p = strings.TrimSpace(p); p != "" {
			h.ignore = append(h.ignore, strings.Split(p, "."))
		}
	}
	return h
}

// Hash returns the base64url SHA-256 of payload's canonical form.
func (h hasher) Hash(payload []byte) (string, error) {
	if depth := jsonDepth(payload); depth > maxJSONDepth {
		return "", fmt.Errorf("%w: nested %d levels deep, more than %d", ErrInvalidPayload, depth, maxJSONDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidPayload, err)
	}
	if dec.More() {
		return "", fmt.Errorf("%w: trailing data after the JSON value", ErrInvalidPayload)
	}
	for _, path := range h.ignore {
		remove(v, path)
	}
	canon, err := json.Marshal(v) // map keys are sorted by encoding/json
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidPayload, err)
	}
	sum := sha256.Sum256(canon)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// remove deletes the field at path from v, if v holds objects along it.
func remove(v any, path []string) {
	for i, name := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		if i == len(path)-1 {
			delete(obj, name)
			return
		}
		v = obj[name]
	}
}

// jsonDepth returns the deepest nesting of objects and arrays in data,
// ignoring brackets inside strings. It does not validate.
func jsonDepth(data []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
