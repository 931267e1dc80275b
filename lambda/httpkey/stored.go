package httpkey

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// storedPrefix marks a result written by this package, and its encoding's
// version: "h1" and one JSON object.
const storedPrefix = "h1"

// stored is a response as the fact's record keeps it (the guard's result,
// at most its MaxResultBytes): the status, the replayed headers and the
// body (as a string when it is UTF-8, else base64 with B64), or, for a
// response that does not fit, the status, the headers and the size of the
// body dropped (Dropped).
type stored struct {
	Status  int                 `json:"s"`
	Header  map[string][]string `json:"h,omitempty"`
	Body    string              `json:"b,omitempty"`
	B64     bool                `json:"e,omitempty"`
	Dropped int                 `json:"d,omitempty"`
}

// encodeResponse returns the result to store for a response: the whole
// response when its encoding fits limit (the guard's MaxResultBytes); else
// its status, its replayed headers and its size, so that the fact stays the
// fact (never a second effect) and its duplicates learn that the body was
// not kept.
func encodeResponse(status int, header http.Header, replay []string, body []byte, limit int) string {
	s := stored{Status: status}
	for _, name := range replay {
		if vs := header.Values(name); len(vs) > 0 {
			if s.Header == nil {
				s.Header = make(map[string][]string, len(replay))
			}
			s.Header[http.CanonicalHeaderKey(name)] = vs
		}
	}
	if utf8.Valid(body) {
		s.Body = string(body)
	} else {
		s.Body, s.B64 = base64.StdEncoding.EncodeToString(body), true
	}
	out, _ := json.Marshal(s) // a struct of strings and ints always encodes
	if len(out)+len(storedPrefix) <= limit {
		return storedPrefix + string(out)
	}
	s.Body, s.B64, s.Dropped = "", false, max(len(body), 1)
	if out, _ = json.Marshal(s); len(out)+len(storedPrefix) > limit {
		s.Header = nil // headers too large to keep: the status and the size alone
		out, _ = json.Marshal(s)
	}
	return storedPrefix + string(out)
}

// errNotStored means a duplicate's record holds no response of this
// package: the record was written by something else under this namespace.
var errNotStored = errors.New("the record holds no stored response")

func decodeResponse(v string) (stored, []byte, error) {
	rest, ok := strings.CutPrefix(v, storedPrefix)
	if !ok {
		return stored{}, nil, errNotStored
	}
	var s stored
	if err := json.Unmarshal([]byte(rest), &s); err != nil || s.Status < 100 || s.Status > 599 {
		return stored{}, nil, fmt.Errorf("%w: %q", errNotStored, truncate(v, 32))
	}
	body := []byte(s.Body)
	if s.B64 {
		var err error
		if body, err = base64.StdEncoding.DecodeString(s.Body); err != nil {
			return stored{}, nil, fmt.Errorf("%w: its body is not base64", errNotStored)
		}
	}
	return s, body, nil
}
