// Package iamcond evaluates the IAM condition operators that the
// constructs' policies use, as IAM does, for the tests that prove a
// condition matches the keys the handler writes: StringLike and
// StringEquals, with IAM's literal forms of the special characters.
package iamcond

import (
	"strings"
	"unicode/utf8"
)

// token is one element of a pattern: a literal rune, or a wildcard.
type token struct {
	literal rune
	kind    byte // 'l' literal, '*' any run, '?' any one
}

// parse reads pattern; with wildcards, '*' and '?' are wildcards (as
// StringLike reads them), else literals (StringEquals). ${*}, ${?} and ${$}
// are the characters '*', '?' and '$' themselves in both.
func parse(pattern string, wildcards bool) []token {
	var tokens []token
	for i := 0; i < len(pattern); {
		if strings.HasPrefix(pattern[i:], "${") && len(pattern) >= i+4 && pattern[i+3] == '}' && strings.ContainsRune("*?$", rune(pattern[i+2])) {
			tokens = append(tokens, token{literal: rune(pattern[i+2]), kind: 'l'})
			i += 4
			continue
		}
		r, n := utf8.DecodeRuneInString(pattern[i:])
		switch {
		case wildcards && (r == '*' || r == '?'):
			tokens = append(tokens, token{kind: byte(r)})
		default:
			tokens = append(tokens, token{literal: r, kind: 'l'})
		}
		i += n
	}
	return tokens
}

// StringLike is IAM's StringLike for one pattern: '*' matches any run of
// characters (none included), '?' any one character, and ${*}, ${?} and
// ${$} the characters '*', '?' and '$' themselves. Matching is case
// sensitive.
func StringLike(pattern, value string) bool { return match(parse(pattern, true), []rune(value)) }

// StringEquals is IAM's StringEquals for one value: exact and case
// sensitive, with ${*}, ${?} and ${$} read as '*', '?' and '$'.
func StringEquals(pattern, value string) bool { return match(parse(pattern, false), []rune(value)) }

func match(tokens []token, v []rune) bool {
	var at func(t, i int) bool
	at = func(t, i int) bool {
		if t == len(tokens) {
			return i == len(v)
		}
		switch tokens[t].kind {
		case '*':
			for j := i; j <= len(v); j++ {
				if at(t+1, j) {
					return true
				}
			}
			return false
		case '?':
			return i < len(v) && at(t+1, i+1)
		}
		return i < len(v) && v[i] == tokens[t].literal && at(t+1, i+1)
	}
	return at(0, 0)
}
