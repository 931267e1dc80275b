package httpkey_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
)

func TestParseKey(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string // "" means refused
	}{
		{[]string{`"8e03978e-40d5-43e8-bc93-6894a57f9324"`}, "8e03978e-40d5-43e8-bc93-6894a57f9324"}, // the draft's example, an sf-string
		{[]string{`8e03978e-40d5-43e8-bc93-6894a57f9324`}, "8e03978e-40d5-43e8-bc93-6894a57f9324"},   // bare, as many clients send
		{[]string{`  "a b"  `}, "a b"},
		{[]string{`"a\"b\\c"`}, `a"b\c`},
		{[]string{`abc:/=+`}, "abc:/=+"},
		{nil, ""},
		{[]string{""}, ""},
		{[]string{`""`}, ""},
		{[]string{`"abc`}, ""},
		{[]string{`"a\nb"`}, ""},
		{[]string{"\"a\tb\""}, ""},
		{[]string{`"a";p=1`}, ""},
		{[]string{`"a", "b"`}, ""},
		{[]string{`a,b`}, ""},
		{[]string{`a b`}, ""},
		{[]string{`a"b`}, ""},
		{[]string{"caf\xc3\xa9"}, ""},
		{[]string{"a", "b"}, ""},
		{[]string{`"` + string(make([]byte, 0)) + `0123456789"`}, "0123456789"},
		{[]string{`01234567890`}, ""}, // 11 bytes > 10
	} {
		max := 10
		if strings.HasPrefix(strings.Trim(strings.Join(tc.in, ""), `"`), "8e03") {
			max = 255
		}
		got, err := httpkey.ParseKey(tc.in, max)
		if tc.want == "" {
			if err == nil || !errors.Is(err, httpkey.ErrBadKey) {
				t.Errorf("ParseKey(%q) = %q, %v; want ErrBadKey", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseKey(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseKey(f *testing.F) {
	f.Add(`"abc"`)
	f.Add(`abc`)
	f.Add(`"a\"b"`)
	f.Fuzz(func(t *testing.T, v string) {
		key, err := httpkey.ParseKey([]string{v}, 255)
		if err != nil {
			return
		}
		if key == "" || len(key) > 255 {
			t.Fatalf("ParseKey(%q) = %q", v, key)
		}
		for i := 0; i < len(key); i++ {
			if key[i] < 0x20 || key[i] > 0x7e {
				t.Fatalf("ParseKey(%q) = %q holds byte %#x", v, key, key[i])
			}
		}
	})
}

// A bound of 0 means the default, as everywhere else: a UUID passes, a key
// over DefaultMaxKeyBytes does not.
func TestParseKeyZeroMeansTheDefault(t *testing.T) {
	if got, err := httpkey.ParseKey([]string{"8e03978e-40d5-43e8-bc93-6894a57f9324"}, 0); err != nil || got != "8e03978e-40d5-43e8-bc93-6894a57f9324" {
		t.Fatalf("ParseKey(uuid, 0) = %q, %v", got, err)
	}
	if _, err := httpkey.ParseKey([]string{strings.Repeat("k", httpkey.DefaultMaxKeyBytes)}, 0); err != nil {
		t.Fatalf("a key of DefaultMaxKeyBytes: %v", err)
	}
	if _, err := httpkey.ParseKey([]string{strings.Repeat("k", httpkey.DefaultMaxKeyBytes+1)}, 0); !errors.Is(err, httpkey.ErrBadKey) {
		t.Fatalf("a key over DefaultMaxKeyBytes: %v", err)
	}
}
