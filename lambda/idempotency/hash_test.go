package idempotency_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// TestPayloadHashCanonicalNumbers: a number is its exact value, however it
// is written, so that a producer that re-serialises a retry sends the same
// fact. Values are compared exactly, never through float64: integers above
// 2^53 stay apart, and exponents of any size are handled in time linear in
// their text.
func TestPayloadHashCanonicalNumbers(t *testing.T) {
	g, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "ns"})
	hash := func(t *testing.T, p string) string {
		t.Helper()
		f, err := g.Fact("k", []byte(p))
		if err != nil {
			t.Fatalf("Fact(%.60s): %v", p, err)
		}
		return f.Hash
	}
	same := [][]string{
		{`5000`, `5000.0`, `5e3`, `5E3`, `5e+3`, `0.5e4`, `50000e-1`, `5000.000000`, `500000000000e-8`},
		{`0`, `-0`, `0.0`, `0e10`, `-0.0e-7`, `0E0`},
		{`-1.5`, `-15e-1`, `-0.15e1`, `-1.50`},
		{`1e999999999`, `10e999999998`, `0.1e1000000000`},
		{`1e-999999999`, `0.1e-999999998`},
		// Exponents beyond int64, compared exactly.
		{`1e100000000000000000000`, `10e99999999999999999999`, `0.01e100000000000000000002`},
		{`1e-100000000000000000000`, `100e-100000000000000000002`},
		{`3e-1000000000000000000`, `0.3e-999999999999999999`, `30e-1000000000000000001`},
		{`7e1000000000000000000`, `70e999999999999999999`, `7000000e999999999999999994`},
	}
	for _, group := range same {
		want := hash(t, `{"n":`+group[0]+`}`)
		for _, n := range group[1:] {
			if got := hash(t, `{"n":`+n+`}`); got != want {
				t.Errorf("%s and %s are one number but hash differently", group[0], n)
			}
		}
	}
	apart := []string{
		`9007199254740993`, `9007199254740992`, `9007199254740993.0000000001`, `9007199254740993e1`,
		`1e999999999`, `1e999999998`, `-1e999999999`, `1e-999999999`,
		`1e100000000000000000000`, `1e100000000000000000001`, `1e-100000000000000000000`,
		`0.1`, `1`, `10`, `-1`, `"1"`, `true`, `null`,
	}
	seen := map[string]string{}
	for _, n := range apart {
		h := hash(t, `{"n":`+n+`}`)
		if other, ok := seen[h]; ok {
			t.Errorf("%s and %s are different values but hash alike", other, n)
		}
		seen[h] = n
	}

	t.Run("bounded work", func(t *testing.T) {
		start := time.Now()
		long := `{"n":1e` + strings.Repeat("9", 200000) + `,"m":-` + strings.Repeat("7", 200000) + `.5e-` + strings.Repeat("1", 200000) + `}`
		same := strings.Replace(long, `1e`+strings.Repeat("9", 200000), `10e`+strings.Repeat("9", 199999)+`8`, 1)
		if hash(t, long) != hash(t, same) {
			t.Fatal("1e999…9 and 10e999…8 are one number but hash differently")
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("hashing numbers with 200,000-digit exponents took %v", d)
		}
	})
}

// TestDuplicateMembersAreInvalid: an object with a member twice is refused;
// which of its values counts would depend on the decoder.
func TestDuplicateMembersAreInvalid(t *testing.T) {
	g, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "ns"})
	for _, p := range []string{
		`{"amount":1,"amount":1000}`,
		`{"a":{"b":1,"b":1}}`,
		`[{"x":1},{"y":2,"y":2}]`,
		`{"a":1,"\u0061":2}`, // one name, written two ways
	} {
		if _, err := g.Fact("k", []byte(p)); !errors.Is(err, idempotency.ErrInvalidPayload) || !strings.Contains(err.Error(), "duplicate") {
			t.Errorf("Fact(%s) = %v, want ErrInvalidPayload naming the duplicate member", p, err)
		}
	}
	for _, p := range []string{`{"a":1,"A":2}`, `[{"a":1},{"a":1}]`, `{"a":{"a":1}}`} {
		if _, err := g.Fact("k", []byte(p)); err != nil {
			t.Errorf("Fact(%s) = %v: distinct members refused", p, err)
		}
	}
}
