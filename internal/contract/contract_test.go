package contract_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// randomSettings draws valid Settings: every field within its bounds and
// every cross-field rule kept, at whole units the construct can write.
func randomSettings(r *rand.Rand) contract.Settings {
	pick := func(units ...time.Duration) time.Duration { return units[r.IntN(len(units))] }
	timeout := time.Duration(1+r.IntN(900)) * time.Second
	s := contract.Defaults(timeout)
	s.Table = fmt.Sprintf("table-%d", r.Int())
	s.Namespace = []string{"charge", "receipt", "wallet", "ñandú", "a.b-c_d"}[r.IntN(5)]
	s.Consumer = fmt.Sprintf("Consumer%d", r.IntN(100))
	s.LeaseMax = time.Second + time.Duration(r.Int64N(int64(timeout-time.Second)+1))
	s.LeaseMax = s.LeaseMax.Truncate(pick(time.Millisecond, time.Second))
	s.LeaseMax = max(s.LeaseMax, time.Second)
	s.FinishBudget = time.Duration(1 + r.Int64N(int64(s.LeaseMax-1))).Truncate(pick(time.Nanosecond, time.Microsecond, time.Millisecond))
	s.FinishBudget = max(s.FinishBudget, 1)
	if s.FinishBudget >= s.LeaseMax {
		s.FinishBudget = s.LeaseMax / 2
	}
	s.MinRemaining = s.FinishBudget + 1 + time.Duration(r.Int64N(int64(timeout-s.FinishBudget-1)))
	if r.IntN(2) == 0 {
		s.TxTables = []string{"Stock", "Orders", "a.b-c_d"}[:1+r.IntN(3)]
	}
	s.MaxReceiveCount = r.IntN(1000 + 1) // SQS takes 1 to 1,000; 0 is unknown
	s.Window = s.LeaseMax + time.Duration(r.Int64N(int64(90*24*time.Hour))).Truncate(pick(time.Second, time.Minute, time.Hour))
	s.TTLAfterWindow = time.Second + time.Duration(r.Int64N(int64(30*24*time.Hour))).Truncate(pick(time.Second, time.Hour))
	s.CacheSize = r.IntN(limits.MaxCacheSize + 1)
	if r.IntN(2) == 0 {
		for range 1 + r.IntN(3) {
			s.PayloadIgnore = append(s.PayloadIgnore, []string{"placedAt", "meta.traceId", "a.b.c", "x y"}[r.IntN(4)])
		}
	}
	if r.IntN(3) == 0 {
		s.KeySecret = strings.Repeat("k", limits.MinKeySecretBytes+r.IntN(40))
	}
	s.BatchConcurrency = 1 + r.IntN(contract.MaxBatchConcurrency)
	s.Delivery = []contract.Delivery{contract.Envelope, contract.Raw, contract.Auto, contract.EventBridge, contract.S3}[r.IntN(5)]
	limit := contract.MaxEnvelopedMessageBytes
	switch s.Delivery {
	case contract.Raw, contract.S3:
		limit = contract.MaxQueueBodyBytes
	case contract.EventBridge:
		limit = contract.MaxEventDetailBytes
	}
	s.MaxMessageBytes = contract.MinMessageBytes + r.IntN(limit-contract.MinMessageBytes+1)
	s.MetricsNamespace = []string{"IdempotentConsumer", "Orders/Wallets"}[r.IntN(2)]
	s.FIFO = r.IntN(2) == 0
	if r.IntN(2) == 0 {
		for range 1 + r.IntN(3) {
			s.TxTables = append(s.TxTables, []string{"Stock", "Shop-Ledger-1A2B", "wallets.v2"}[r.IntN(3)])
		}
	}
	s.MaxReceiveCount = r.IntN(1001)
	s.BackoffBase = []time.Duration{0, time.Second, 90 * time.Second, 10 * time.Minute}[r.IntN(4)]
	s.BackoffCap = max(s.BackoffBase, time.Second) + time.Duration(r.Int64N(int64(contract.MaxBackoff-max(s.BackoffBase, time.Second))+1)).Truncate(time.Second)
	s.BackoffFIFOCap = time.Second + time.Duration(r.Int64N(int64(contract.MaxBackoff-time.Second)+1)).Truncate(pick(time.Second, time.Minute))
	if b, _ := s.Backoff(); b.Horizon(s.MaxReceiveCount) >= s.Window-limits.ClockSkewMargin {
		s.BackoffBase = 0 // off: a horizon this long is refused (TestBackoffRules)
	}
	return s
}

// TestRoundTrip: every valid Settings value survives Encode and Decode
// unchanged, and is valid on both sides.
func TestRoundTrip(t *testing.T) {
	const cases = 20_000
	r := rand.New(rand.NewPCG(1, 2))
	for i := range cases {
		s := randomSettings(r)
		if err := s.Validate(); err != nil {
			t.Fatalf("case %d: the generator drew invalid settings %+v: %v", i, s, err)
		}
		env := s.Encode()
		got, err := contract.Decode(func(k string) string { return env[k] }, "fallback")
		if err != nil {
			t.Fatalf("case %d: Decode(Encode(%+v)): %v\nenvironment %v", i, s, err, env)
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("case %d: round trip changed the settings:\n got %+v\nwant %+v\nenvironment %v", i, got, s, env)
		}
	}
	t.Logf("%d valid settings survived the round trip", cases)
}

// TestDecodeDefaults: a handler deployed by other means needs only the
// table and the namespace; the rest takes the defaults, the consumer the
// fallback name.
func TestDecodeDefaults(t *testing.T) {
	env := map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns"}
	got, err := contract.Decode(func(k string) string { return env[k] }, "my-function")
	if err != nil {
		t.Fatal(err)
	}
	want := contract.Defaults(contract.DefaultTimeout)
	want.Table, want.Namespace, want.Consumer = "t", "ns", "my-function"
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

// TestInvalidSettings: hand-written invalid settings are refused by the
// rule that names them, and the handler's Decode of their encoding refuses
// them by the same rule, in the same words.
func TestInvalidSettings(t *testing.T) {
	valid := func() contract.Settings {
		s := contract.Defaults(30 * time.Second)
		s.Table, s.Namespace, s.Consumer = "t", "charge", "Charge"
		return s
	}
	for _, tc := range []struct {
		name   string
		change func(s *contract.Settings)
		rule   string
	}{
		{"window shorter than the lease", func(s *contract.Settings) { s.Window = 10 * time.Second }, "Window 10s is shorter than LeaseMax 30s"},
		{"window under a second", func(s *contract.Settings) { s.Window = 500 * time.Millisecond }, "Window 500ms is shorter than 1s"},
		{"lease under a second", func(s *contract.Settings) { s.LeaseMax = 500 * time.Millisecond }, "LeaseMax 500ms is shorter than 1s"},
		{"lease past the timeout", func(s *contract.Settings) { s.LeaseMax = time.Minute }, "LeaseMax 1m is longer than Timeout 30s"},
		{"TTL at the end of the window", func(s *contract.Settings) { s.TTLAfterWindow = 0 }, "TTLAfterWindow 0s is shorter than 1s"},
		{"no time to start", func(s *contract.Settings) { s.MinRemaining = 0 }, "MinRemaining 0s is not more than FinishBudget 2s"},
		{"min remaining past the timeout", func(s *contract.Settings) { s.MinRemaining = time.Minute }, "MinRemaining 1m is not less than Timeout 30s, so no record could ever start"},
		{"no finishing budget", func(s *contract.Settings) { s.FinishBudget = 0 }, "FinishBudget 0s must be positive"},
		{"finishing budget over the lease", func(s *contract.Settings) { s.FinishBudget = 40 * time.Second }, "FinishBudget 40s leaves no time for the effect within LeaseMax 30s"},
		{"timeout over 15 minutes", func(s *contract.Settings) { s.Timeout = 20 * time.Minute; s.LeaseMax = 20 * time.Minute }, "Timeout 20m is out of range"},
		{"timeout in fractions", func(s *contract.Settings) {
			s.Timeout = 1500 * time.Millisecond
			s.LeaseMax = time.Second
			s.MinRemaining = 1200 * time.Millisecond
			s.FinishBudget = 100 * time.Millisecond
		}, "Timeout 1500ms is out of range"},
		{"cache beyond the bound", func(s *contract.Settings) { s.CacheSize = 50_000_000 }, "CacheSize 50000000 is out of range"},
		{"a thousand records at once", func(s *contract.Settings) { s.BatchConcurrency = 1000 }, "BatchConcurrency 1000 is out of range"},
		{"no concurrency", func(s *contract.Settings) { s.BatchConcurrency = 0 }, "BatchConcurrency 0 is out of range"},
		{"negative receives", func(s *contract.Settings) { s.MaxReceiveCount = -1 }, "MaxReceiveCount -1 is out of range"},
		{"more receives than SQS counts", func(s *contract.Settings) { s.MaxReceiveCount = 1001 }, "MaxReceiveCount 1001 is out of range"},
		{"an empty table name", func(s *contract.Settings) { s.TxTables = []string{"Stock", ""} }, `TxTables has the table name ""`},
		{"message larger than an envelope holds", func(s *contract.Settings) { s.MaxMessageBytes = 600_000 }, "MaxMessageBytes 600000 is more than 520192"},
		{"message larger than SQS takes", func(s *contract.Settings) { s.Delivery = contract.Raw; s.MaxMessageBytes = 2 << 20 }, "MaxMessageBytes 2097152 is out of range"},
		{"unknown delivery", func(s *contract.Settings) { s.Delivery = "smoke" }, `Delivery "smoke" is not one of`},
		{"event detail larger than an SQS body can carry", func(s *contract.Settings) {
			s.Delivery = contract.EventBridge
			s.MaxMessageBytes = contract.MaxQueueBodyBytes
		},
			"MaxMessageBytes 1048576 is more than 1040384, the largest event detail"},
		{"namespace with a wildcard", func(s *contract.Settings) { s.Namespace = "ord*" }, `Namespace "ord*" contains '*' or '?'`},
		{"namespace with a question mark", func(s *contract.Settings) { s.Namespace = "ord?" }, `Namespace "ord?" contains '*' or '?'`},
		{"namespace not UTF-8", func(s *contract.Settings) { s.Namespace = "ord\xff" }, `is not valid UTF-8`},
		{"namespace with a control character", func(s *contract.Settings) { s.Namespace = "ord\tx" }, `contains control characters`},
		{"namespace too long for a key", func(s *contract.Settings) { s.Namespace = strings.Repeat("n", 1025) }, "Namespace of 1025 bytes is longer than 1024"},
		{"metrics in AWS's namespace", func(s *contract.Settings) { s.MetricsNamespace = "AWS/Lambda" }, `MetricsNamespace "AWS/Lambda" starts with "AWS/"`},
		{"metrics namespace with a colon", func(s *contract.Settings) { s.MetricsNamespace = ":Shop" }, `MetricsNamespace ":Shop" starts with ':'`},
		{"metrics namespace too long", func(s *contract.Settings) { s.MetricsNamespace = strings.Repeat("m", 256) }, "MetricsNamespace of 256 characters is longer than CloudWatch's 255"},
		{"metrics namespace not ASCII", func(s *contract.Settings) { s.MetricsNamespace = "Tienda/Ñandú" }, "holds characters other than printable ASCII"},
		{"a timeout too short for its defaults", func(s *contract.Settings) {
			*s = contract.Defaults(2 * time.Second)
			s.Table, s.Namespace, s.Consumer = "t", "charge", "Charge"
		},
			"Timeout 2s is too short: a record starts only with 3s left before the deadline (2s to complete its record, 1s for its effect); give at least 4s"},
		{"namespace with #", func(s *contract.Settings) { s.Namespace = "a#b" }, `Namespace "a#b" contains '#'`},
		{"short key secret", func(s *contract.Settings) { s.KeySecret = "short" }, "KeySecret has 5 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := valid()
			tc.change(&s)
			if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.rule) {
				t.Fatalf("Validate: %v; want the rule %q", err, tc.rule)
			}
			env := s.Encode()
			if _, err := contract.Decode(func(k string) string { return env[k] }, ""); err == nil || !strings.Contains(err.Error(), tc.rule) {
				t.Fatalf("Decode: %v; want the rule %q", err, tc.rule)
			}
		})
	}
}

// TestUnencodableSettings: a field name with a comma cannot be written into
// the comma-separated variable; Validate refuses it before it is encoded.
func TestUnencodableSettings(t *testing.T) {
	s := contract.Defaults(30 * time.Second)
	s.Table, s.Namespace, s.Consumer = "t", "charge", "Charge"
	s.PayloadIgnore = []string{"a,b"}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), `PayloadIgnore has the field name "a,b"`) {
		t.Fatalf("Validate: %v", err)
	}
}

// TestDecodeSaysWhatDoesNotParse: a value that is not of its variable's
// type is named with the variable, and a contract version other than the
// library's is ErrVersion.
func TestDecodeSaysWhatDoesNotParse(t *testing.T) {
	env := map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns", contract.WindowVar: "a day", contract.CacheSizeVar: "many", contract.FIFOVar: "yes"}
	_, err := contract.Decode(func(k string) string { return env[k] }, "f")
	if err == nil || !strings.Contains(err.Error(), `IDEMPOTENCY_WINDOW="a day"`) || !strings.Contains(err.Error(), `IDEMPOTENCY_CACHE_SIZE="many"`) || !strings.Contains(err.Error(), `QUEUE_FIFO="yes": want "true" or "false"`) {
		t.Fatalf("err %v; want the three variables named", err)
	}
	env = map[string]string{contract.VersionVar: "2", contract.TableVar: "t", contract.NamespaceVar: "ns"}
	_, err = contract.Decode(func(k string) string { return env[k] }, "f")
	if err == nil || !strings.Contains(err.Error(), "contract version 2") {
		t.Fatalf("err %v; want the version mismatch", err)
	}
}

// FuzzDecode: any environment decodes without a panic, and what decodes
// encodes back to itself.
func FuzzDecode(f *testing.F) {
	f.Add("t", "ns", "24h", "30s", "2s", "3s", "0", "10", "10", "262144", "envelope", "1", "false")
	f.Add("t", "a#b", "1ms", "15m", "0s", "-1s", "-5", "0", "99999", "x", "raw", "2", "TRUE")
	f.Fuzz(func(t *testing.T, table, ns, window, timeout, budget, minRemaining, cache, batch, conc, size, delivery, version, fifo string) {
		env := map[string]string{
			contract.TableVar: table, contract.NamespaceVar: ns, contract.WindowVar: window, contract.TimeoutVar: timeout,
			contract.FinishBudgetVar: budget, contract.MinRemainingVar: minRemaining, contract.CacheSizeVar: cache,
			contract.MaxReceiveCountVar: batch, contract.BatchConcurrencyVar: conc, contract.MaxMessageBytesVar: size,
			contract.DeliveryVar: delivery, contract.VersionVar: version, contract.FIFOVar: fifo,
		}
		s, err := contract.Decode(func(k string) string { return env[k] }, "f")
		if err != nil {
			return
		}
		again := s.Encode()
		back, err := contract.Decode(func(k string) string { return again[k] }, "f")
		if err != nil || !reflect.DeepEqual(back, s) {
			t.Fatalf("decoded %+v, encoded %v, decoded again %+v, %v", s, again, back, err)
		}
	})
}

func TestFormat(t *testing.T) {
	for in, want := range map[string]string{"0s": "0s", "24h": "24h", "90m": "90m", "1h30m": "90m", "90s": "90s", "1.5s": "1500ms", "36h": "36h", "1.5ms": "1500us", "3ns": "3ns"} {
		d, err := time.ParseDuration(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := contract.Format(d); got != want {
			t.Errorf("Format(%s) = %s, want %s", in, got, want)
		}
	}
}
