package idempotency

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/jsonesc"
)

// maxJSONDepth bounds the nesting of a payload that is hashed, so that a
// hostile body cannot exhaust the stack.
const maxJSONDepth = 64

// Payload hash versions.
//
// A stored payload hash names the canonical form and the function it was
// computed with, so that a later release that changes either can tell the
// records it must still read from its own. The first release writes two
// (of canonical form 2: form 1 was never released), and a later release
// must read both:
//   - "v2:" and the base64url SHA-256 of canonical form 2, without a key
//     secret;
//   - "k2:" and the base64url HMAC-SHA-256 of canonical form 2 under the
//     payload key, with Config.KeySecret: the payload key is derived from
//     the secret with HKDF-SHA-256 (no salt, info payloadKeyInfo), so that
//     nobody without the secret can test a guessed payload against a
//     stored hash.
const (
	hashTagV2      = "v2:"
	hashTagKeyedV2 = "k2:"
	payloadKeyInfo = "idempotency payload hash k2"
)

// hasher computes the payload hash: SHA-256 (or, keyed, HMAC-SHA-256) of
// the canonical JSON after removing the ignored fields.
type hasher struct {
	ignore [][]string // dotted paths, split
	key    []byte     // the payload key; nil without a key secret
}

// newHasher returns the hasher that leaves out the fields at the paths of
// ignore and, with a key secret, keys the hash with a key derived from it.
func newHasher(ignore []string, secret []byte) hasher {
	h := hasher{}
	for _, p := range ignore {
		if p = strings.TrimSpace(p); p != "" {
			h.ignore = append(h.ignore, strings.Split(p, "."))
		}
	}
	if len(secret) > 0 {
		key, err := hkdf.Key(sha256.New, secret, nil, payloadKeyInfo, sha256.Size)
		if err != nil { // only for a key length beyond 255 × 32 bytes
			panic(err)
		}
		h.key = key
	}
	return h
}

// Hash returns the hash of payload: "v2:" and the base64url SHA-256 of its
// canonical form (version 2), or with a key secret "k2:" and the base64url
// HMAC-SHA-256 of that form under the payload key.
//
// The canonical form is strict about what would make the identity of a fact
// ambiguous, and refuses it as invalid (ErrInvalidPayload):
//   - a lone UTF-16 surrogate escape ("\ud800" without its pair), which
//     encoding/json silently turns into U+FFFD, so that two different
//     strings would decode alike;
//   - an object with a member twice (after decoding the names), whose value
//     depends on the decoder.
//
// Numbers are their exact decimal value, however written: 5000, 5000.0, 5e3
// and 0.5e4 are one number; integers beyond 2^53 stay exact, and an exponent
// of any length is handled in time linear in its text. Objects have their
// members sorted by name; insignificant whitespace goes.
func (h hasher) Hash(payload []byte) (string, error) {
	p := canonParser{data: payload}
	v, err := p.document()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidPayload, err)
	}
	for _, path := range h.ignore {
		remove(v, path)
	}
	canon := appendCanonical(nil, v)
	if h.key == nil {
		sum := sha256.Sum256(canon)
		return hashTagV2 + base64.RawURLEncoding.EncodeToString(sum[:]), nil
	}
	mac := hmac.New(sha256.New, h.key)
	mac.Write(canon)
	return hashTagKeyedV2 + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), nil
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

// number is a JSON number in canonical form: its exact value as a
// significand without leading or trailing zeros and a decimal exponent
// ("5e3" for 5000, "-15e-1" for -1.5, "0" for zero).
type number string

// canonParser reads one JSON document (RFC 8259) into objects
// (map[string]any), arrays ([]any), strings, numbers (number), booleans and
// nil, refusing lone surrogates, duplicate members and nesting deeper than
// maxJSONDepth. Its work is linear in the size of the document.
type canonParser struct {
	data  []byte
	pos   int
	depth int
}

func (p *canonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *canonParser) document() (any, error) {
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(p.data) {
		return nil, p.errorf("trailing data after the JSON value")
	}
	return v, nil
}

func (p *canonParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *canonParser) value() (any, error) {
	p.space()
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of JSON")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	for _, lit := range []struct {
		text string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if bytes.HasPrefix(p.data[p.pos:], []byte(lit.text)) {
			p.pos += len(lit.text)
			return lit.v, nil
		}
	}
	return nil, p.errorf("invalid character %q looking for a value", p.data[p.pos])
}

func (p *canonParser) nest() error {
	if p.depth++; p.depth > maxJSONDepth {
		return p.errorf("nested more than %d levels deep", maxJSONDepth)
	}
	return nil
}

func (p *canonParser) object() (any, error) {
	if err := p.nest(); err != nil {
		return nil, err
	}
	p.pos++ // '{'
	obj := map[string]any{}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return obj, nil
	}
	for {
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("want a member name")
		}
		name, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := obj[name]; dup {
			return nil, p.errorf("duplicate member %q in an object: which of its values counts is undefined", name)
		}
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("want ':' after a member name")
		}
		p.pos++
		if obj[name], err = p.value(); err != nil {
			return nil, err
		}
		p.space()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of JSON in an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.depth--
			return obj, nil
		default:
			return nil, p.errorf("want ',' or '}' in an object")
		}
	}
}

func (p *canonParser) array() (any, error) {
	if err := p.nest(); err != nil {
		return nil, err
	}
	p.pos++ // '['
	arr := []any{}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return arr, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		p.space()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of JSON in an array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			p.depth--
			return arr, nil
		default:
			return nil, p.errorf("want ',' or ']' in an array")
		}
	}
}

// str reads a string, decoding its escapes. A lone UTF-16 surrogate escape,
// a control character or invalid UTF-8 is an error.
func (p *canonParser) str() (string, error) {
	p.pos++ // '"'
	var b []byte
	for {
		start := p.pos
		for p.pos < len(p.data) {
			c := p.data[p.pos]
			if c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
				break
			}
			p.pos++
		}
		b = append(b, p.data[start:p.pos]...)
		if p.pos >= len(p.data) {
			return "", p.errorf("unexpected end of JSON in a string")
		}
		switch c := p.data[p.pos]; {
		case c == '"':
			p.pos++
			return string(b), nil
		case c < 0x20:
			return "", p.errorf("control character %#02x in a string", c)
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.errorf("invalid UTF-8 in a string")
			}
			b = append(b, p.data[p.pos:p.pos+size]...)
			p.pos += size
		default: // '\\'
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			b = utf8.AppendRune(b, r)
		}
	}
}

// escape reads one escape sequence (a surrogate pair is one) at the
// backslash and returns the character it stands for.
func (p *canonParser) escape() (rune, error) {
	if p.pos+1 >= len(p.data) {
		return 0, p.errorf("unexpected end of JSON in an escape")
	}
	c := p.data[p.pos+1]
	if c != 'u' {
		p.pos += 2
		switch c {
		case '"', '\\', '/':
			return rune(c), nil
		case 'b':
			return '\b', nil
		case 'f':
			return '\f', nil
		case 'n':
			return '\n', nil
		case 'r':
			return '\r', nil
		case 't':
			return '\t', nil
		}
		return 0, p.errorf("invalid escape \\%c", c)
	}
	r, n, err := jsonesc.Unicode(p.data, p.pos)
	switch {
	case errors.Is(err, jsonesc.ErrLoneSurrogate):
		return 0, p.errorf("lone UTF-16 surrogate \\u%04x: not valid Unicode (a decoder would turn it into U+FFFD)", r)
	case err != nil:
		return 0, p.errorf("invalid \\u escape")
	}
	p.pos += n
	return r, nil
}

// number reads a number into its canonical form.
func (p *canonParser) number() (any, error) {
	start := p.pos
	neg := p.data[p.pos] == '-'
	if neg {
		p.pos++
	}
	digits := func() []byte {
		from := p.pos
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
		}
		return p.data[from:p.pos]
	}
	intPart := digits()
	if len(intPart) == 0 || len(intPart) > 1 && intPart[0] == '0' {
		return nil, p.errorf("invalid number %q", p.data[start:p.pos])
	}
	var frac, exp []byte
	expNeg := false
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if frac = digits(); len(frac) == 0 {
			return nil, p.errorf("invalid number: no digits after the point")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			expNeg = p.data[p.pos] == '-'
			p.pos++
		}
		if exp = digits(); len(exp) == 0 {
			return nil, p.errorf("invalid number: no digits in the exponent")
		}
	}
	return canonicalNumber(neg, intPart, frac, expNeg, exp), nil
}

// canonicalNumber returns the canonical form of the number
// [-]intPart[.frac][e[-]exp]: its digits without leading and trailing
// zeros (the significand s) and the exponent e with value = s × 10^e. The
// exponent is exact whatever its length: the shift the significand brings is
// at most the length of the text, and is added to a long exponent digit by
// digit.
func canonicalNumber(neg bool, intPart, frac []byte, expNeg bool, exp []byte) number {
	all := append(append(make([]byte, 0, len(intPart)+len(frac)), intPart...), frac...)
	sig := bytes.TrimLeft(all, "0")
	if len(sig) == 0 {
		return "0" // -0 is 0
	}
	trimmed := bytes.TrimRight(sig, "0")
	shift := int64(len(sig)-len(trimmed)) - int64(len(frac)) // value = trimmed × 10^(exp+shift)
	var e string
	exp = bytes.TrimLeft(exp, "0")
	if len(exp) <= 18 { // fits an int64, and so does exp+shift
		var n int64
		if len(exp) > 0 {
			n, _ = strconv.ParseInt(string(exp), 10, 64)
		}
		if expNeg {
			n = -n
		}
		e = strconv.FormatInt(n+shift, 10)
	} else { // |exp| ≥ 10^18 > |shift|: the sign is exp's
		if expNeg {
			shift = -shift
		}
		e = string(addSmall(exp, shift))
		if expNeg {
			e = "-" + e
		}
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.Write(trimmed)
	if e != "0" {
		b.WriteByte('e')
		b.WriteString(e)
	}
	return number(b.String())
}

// addSmall returns the decimal m + d, for a decimal m (no leading zeros)
// greater than |d|, in time linear in len(m).
func addSmall(m []byte, d int64) []byte {
	out := slices.Clone(m)
	if d >= 0 {
		carry := d
		for i := len(out) - 1; i >= 0 && carry > 0; i-- {
			s := int64(out[i]-'0') + carry
			out[i], carry = byte('0'+s%10), s/10
		}
		if carry > 0 {
			out = append([]byte(strconv.FormatInt(carry, 10)), out...)
		}
		return out
	}
	borrow := -d
	for i := len(out) - 1; i >= 0 && borrow > 0; i-- {
		s := int64(out[i]-'0') - borrow%10
		borrow /= 10
		if s < 0 {
			s += 10
			borrow++
		}
		out[i] = byte('0' + s)
	}
	return bytes.TrimLeft(out, "0")
}

// appendCanonical appends the canonical encoding of v, a value read by
// canonParser: members sorted by name, strings escaping only '"', '\\' and
// control characters, numbers in canonical form.
func appendCanonical(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case number:
		return append(b, v...)
	case string:
		return appendString(b, v)
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCanonical(b, e)
		}
		return append(b, ']')
	case map[string]any: // the last type canonParser makes
		names := make([]string, 0, len(v))
		for name := range v {
			names = append(names, name)
		}
		slices.Sort(names)
		b = append(b, '{')
		for i, name := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, name)
			b = append(b, ':')
			b = appendCanonical(b, v[name])
		}
		return append(b, '}')
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = fmt.Appendf(b, `\u%04x`, c)
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
