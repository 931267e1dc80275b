package jsonesc

import (
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func TestUnicode(t *testing.T) {
	for _, c := range []struct {
		in   string
		r    rune
		n    int
		want error
	}{
		{`\u00e9`, 'é', 6, nil},
		{`\u00E9x`, 'é', 6, nil},
		{`\ud83d\ude00`, '😀', 12, nil},
		{`\uD83D\uDE00`, '😀', 12, nil},
		{`\ud800`, 0xD800, 0, ErrLoneSurrogate},
		{`\ud800x`, 0xD800, 0, ErrLoneSurrogate},
		{`\ud800\u0041`, 0xD800, 0, ErrLoneSurrogate},
		{`\ud800\ud800`, 0xD800, 0, ErrLoneSurrogate},
		{`\ude00`, 0xDE00, 0, ErrLoneSurrogate},
		{`\ud800\uzzzz`, 0xD800, 0, ErrLoneSurrogate},
		{`\u12`, 0, 0, ErrBadEscape},
		{`\u12g4`, 0, 0, ErrBadEscape},
		{`\n`, 0, 0, ErrBadEscape},
	} {
		r, n, err := Unicode([]byte(c.in), 0)
		if !errors.Is(err, c.want) || r != c.r || n != c.n {
			t.Errorf("Unicode(%s) = %U, %d, %v; want %U, %d, %v", c.in, r, n, err, c.r, c.n, c.want)
		}
	}
}

func TestLoneSurrogate(t *testing.T) {
	for in, want := range map[string]int{
		`"plain"`:                           -1,
		`"caf\u00e9"`:                       -1,
		`"\ud83d\ude00"`:                    -1,
		`"a\ud800"`:                         2,
		`"\ud83d\ude00\udc00"`:              13,
		`"\\ud800"`:                         -1, // a backslash, then text
		`"\\\ud800"`:                        3,
		`{"a":"\u0041","b":"\ud800\u0041"}`: 19,
		`"\u12"`:                            -1,
	} {
		if got := LoneSurrogate([]byte(in)); got != want {
			t.Errorf("LoneSurrogate(%s) = %d, want %d", in, got, want)
		}
	}
}

// FuzzUnicode: what Unicode reads is what encoding/json decodes, and what it
// refuses as a lone surrogate is what encoding/json turns into U+FFFD.
func FuzzUnicode(f *testing.F) {
	for _, s := range []string{`\u0041`, `\ud83d\ude00`, `\ud800`, `\udc00\ud800`, `\uD800\uDBFF`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, n, err := Unicode([]byte(s), 0)
		if err == ErrBadEscape {
			return
		}
		var got string
		if json.Unmarshal([]byte(`"`+s[:6]+`"`), &got) != nil {
			t.Fatalf("encoding/json refuses %q, which Unicode read", s[:6])
		}
		if err == ErrLoneSurrogate {
			if !utf16.IsSurrogate(r) {
				t.Fatalf("Unicode(%q): lone surrogate %U is not a surrogate", s, r)
			}
			return
		}
		if json.Unmarshal([]byte(`"`+s[:n]+`"`), &got) != nil || got != string(r) {
			t.Fatalf("Unicode(%q) = %U; encoding/json decodes %q", s, r, got)
		}
	})
}

// TestUnquote: what encoding/json reads from a string literal, or a refusal
// where it would have read a lone surrogate as U+FFFD or refuses the text.
func TestUnquote(t *testing.T) {
	for _, in := range []string{`""`, `"abc"`, `"a\"b"`, `"{\"orderId\":\"o-1\"}"`, `"\\\/\b\f\n\r\t"`, `"\u00e9\ud83d\ude00"`,
		`"é😀"`, `"\ud800"`, `"\ude00x"`, `"a`, `"a\"`, `"a"b"`, `abc`, `"\x"`, "\"a\tb\"", `"\u12"`, `"\\u0041"`, `"x\\"`, `"`, ``, `1`} {
		checkUnquote(t, []byte(in))
	}
}

func FuzzUnquote(f *testing.F) {
	for _, in := range []string{`"abc"`, `"a\"b\\c\u00e9"`, `"\ud83d\ude00"`, `"\ud800"`, `"a`} {
		f.Add([]byte(in))
	}
	f.Fuzz(checkUnquote)
}

func checkUnquote(t *testing.T, in []byte) {
	if !utf8.Valid(in) {
		return // Unquote's caller checks UTF-8 first
	}
	got, err := Unquote(in)
	var want string
	werr := json.Unmarshal(in, &want)
	if werr == nil && (in[0] != '"' || in[len(in)-1] != '"') {
		werr = errors.New("not exactly a string literal") // a number, an object, or space around the literal
	}
	switch {
	case werr == nil && LoneSurrogate(in) >= 0:
		if !errors.Is(err, ErrLoneSurrogate) {
			t.Errorf("Unquote(%q) = %q, %v; want ErrLoneSurrogate", in, got, err)
		}
	case werr == nil:
		if err != nil || string(got) != want {
			t.Errorf("Unquote(%q) = %q, %v; encoding/json reads %q", in, got, err, want)
		}
	case err == nil:
		t.Errorf("Unquote(%q) = %q; encoding/json refuses it: %v", in, got, werr)
	}
}
