// Package jsonesc reads JSON's \u escapes strictly: a UTF-16 surrogate
// escape must be half of a pair. A decoder such as encoding/json turns a
// lone surrogate into U+FFFD, so that two different texts decode alike;
// both the payload hash (package idempotency) and the SNS envelope reader
// (package sqsbatch) refuse them with this one reading.
package jsonesc

import (
	"errors"
	"unicode/utf8"
)

// Errors of Unicode.
var (
	// ErrBadEscape means the text at the offset is not \u and four hex
	// digits.
	ErrBadEscape = errors.New("invalid \\u escape")
	// ErrLoneSurrogate means the escape is a UTF-16 surrogate that is not
	// half of a pair (a high surrogate followed by a low one).
	ErrLoneSurrogate = errors.New("lone UTF-16 surrogate escape")
)

// Unicode reads the \u escape at s[i:] and returns the character it stands
// for and its length in bytes: 6, or 12 for a surrogate pair (two escapes).
// For a lone surrogate it returns the surrogate itself with
// ErrLoneSurrogate.
func Unicode(s []byte, i int) (r rune, n int, err error) {
	r, ok := hex4(s, i)
	switch {
	case !ok:
		return 0, 0, ErrBadEscape
	case r < 0xD800 || r > 0xDFFF:
		return r, 6, nil
	case r >= 0xDC00: // a low half with no high half before it
		return r, 0, ErrLoneSurrogate
	}
	low, ok := hex4(s, i+6)
	if !ok || low < 0xDC00 || low > 0xDFFF {
		return r, 0, ErrLoneSurrogate
	}
	return (r-0xD800)<<10 | (low - 0xDC00) + 0x10000, 12, nil
}

// LoneSurrogate returns the offset in s (JSON text, or a JSON string
// literal) of the first \u escape of a lone UTF-16 surrogate, or -1. It
// skips the other escapes (\\, \", \n...) whole, so that \\u0000 is a
// backslash and text, not an escape.
func LoneSurrogate(s []byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		_, n, err := Unicode(s, i)
		switch err {
		case ErrLoneSurrogate:
			return i
		case ErrBadEscape:
			i++ // a one-character escape: skip it
		default:
			i += n - 1
		}
	}
	return -1
}

// hex4 reads the \uXXXX escape at s[i:], if there is one.
func hex4(s []byte, i int) (rune, bool) {
	if i < 0 || i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range s[i+2 : i+6] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// Errors of Unquote.
var (
	// ErrNotString means the text is not one JSON string literal.
	ErrNotString = errors.New("not a JSON string")
)

// Unquote returns the text of the JSON string literal s (its quotes
// included), read strictly in one pass: the escapes of RFC 8259 (a
// surrogate escape must be half of a pair: ErrLoneSurrogate), no control
// character, nothing after the closing quote. s must be valid UTF-8 (the
// caller's check: Unquote does not read the bytes it copies). A literal
// without escapes is returned as a slice of s.
func Unquote(s []byte) ([]byte, error) {
	if len(s) < 2 || s[0] != '"' {
		return nil, ErrNotString
	}
	end := len(s) - 1
	i := 1
	for i < end && s[i] != '\\' && s[i] != '"' && s[i] >= 0x20 {
		i++
	}
	if i == end && s[end] == '"' {
		return s[1:end], nil // no escape
	}
	out := append(make([]byte, 0, end-1), s[1:i]...)
	for i < end {
		switch c := s[i]; {
		case c == '"' || c < 0x20:
			return nil, ErrNotString
		case c != '\\':
			out = append(out, c)
			i++
		case i+1 >= end:
			return nil, ErrNotString
		case s[i+1] == 'u':
			r, n, err := Unicode(s[:end], i)
			if err != nil {
				return nil, err
			}
			out = utf8.AppendRune(out, r)
			i += n
		default:
			e := unescape(s[i+1])
			if e == 0 {
				return nil, ErrBadEscape
			}
			out = append(out, e)
			i += 2
		}
	}
	if s[end] != '"' {
		return nil, ErrNotString
	}
	return out, nil
}

// unescape is what JSON's one-character escape \c stands for, or 0.
func unescape(c byte) byte {
	switch c {
	case '"', '\\', '/':
		return c
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return 0
}
