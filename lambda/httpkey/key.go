package httpkey

import (
	"errors"
	"fmt"
	"strings"
)

// errBadKey means the request's Idempotency-Key is missing or malformed:
// the adapter answers 400 and stores nothing.
var errBadKey = errors.New("bad Idempotency-Key")

// parseKey returns the key that an Idempotency-Key field value carries:
// a Structured Field string (RFC 8941 §3.3.3, a quoted string with \" and \\
// escapes, as draft-ietf-httpapi-idempotency-key-header-07 §2.1 defines the
// field), or a bare token of visible ASCII without quotes, backslashes,
// commas, semicolons or spaces, which many clients send (a UUID is not a
// valid sf-token, since it may start with a digit). The key is 1 to max
// bytes of printable ASCII (%x20-7E; a space only inside quotes). Parameters
// (";a=1") and lists (a second key after a comma, or the field twice) are
// refused: a request carries one key. A max of 0 or less means
// defaultMaxKeyBytes, as in Config. Errors wrap errBadKey.
func parseKey(values []string, max int) (string, error) {
	if max <= 0 {
		max = defaultMaxKeyBytes
	}
	switch len(values) {
	case 0:
		return "", fmt.Errorf("%w: the header is missing", errBadKey)
	case 1:
	default:
		return "", fmt.Errorf("%w: the header is given %d times; send one key", errBadKey, len(values))
	}
	v := strings.Trim(values[0], " \t")
	if v == "" {
		return "", fmt.Errorf("%w: the header is empty", errBadKey)
	}
	var key string
	if v[0] == '"' {
		var b strings.Builder
		i := 1
		closed := false
		for ; i < len(v); i++ {
			c := v[i]
			switch {
			case c == '\\':
				i++
				if i == len(v) || (v[i] != '"' && v[i] != '\\') {
					return "", fmt.Errorf("%w: a backslash escapes only '\"' or '\\' in a structured-field string", errBadKey)
				}
				b.WriteByte(v[i])
			case c == '"':
				closed = true
			case c < 0x20 || c > 0x7e:
				return "", fmt.Errorf("%w: byte 0x%02x is not printable ASCII", errBadKey, c)
			default:
				b.WriteByte(c)
			}
			if closed {
				break
			}
		}
		if !closed {
			return "", fmt.Errorf("%w: the quoted string is not closed", errBadKey)
		}
		if rest := v[i+1:]; rest != "" {
			return "", fmt.Errorf("%w: %q follows the quoted key; parameters and lists are not accepted", errBadKey, truncate(rest, 16))
		}
		key = b.String()
	} else {
		for i := 0; i < len(v); i++ {
			if c := v[i]; c <= 0x20 || c > 0x7e || c == '"' || c == '\\' || c == ',' || c == ';' {
				return "", fmt.Errorf("%w: byte %q at %d does not belong in a bare key (quote the key as a structured-field string)", errBadKey, c, i)
			}
		}
		key = v
	}
	switch {
	case key == "":
		return "", fmt.Errorf("%w: the key is empty", errBadKey)
	case len(key) > max:
		return "", fmt.Errorf("%w: the key is %d bytes, longer than %d", errBadKey, len(key), max)
	}
	return key, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
