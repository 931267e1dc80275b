package contract

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// fields is the contract: one entry per setting, in the order in which
// defaults are applied (a default may depend on an entry above it: LeaseMax
// on Timeout, MinRemaining on FinishBudget). A new setting is a field of
// Settings and one entry here; its cross-field rules, if any, go in
// Problems.
var fields = []Field{
	entry(TableVar, "Table", "Table",
		"none: required", "shop-idempotency",
		"the DynamoDB idempotency table's name",
		func(s *Settings) *string { return &s.Table }, none[string]),
	entry(NamespaceVar, "Namespace", "Namespace",
		"none: required", "reserve",
		"the prefix of every key, \"<namespace>#<key>\"",
		func(s *Settings) *string { return &s.Namespace }, none[string]),
	entry(TimeoutVar, "Timeout", "Timeout",
		Format(DefaultTimeout), "12m",
		"the function's timeout",
		func(s *Settings) *time.Duration { return &s.Timeout }, func(Settings) time.Duration { return DefaultTimeout }),
	entry(WindowVar, "Window", "Window",
		Format(idempotency.DefaultWindow), "36h",
		"the business window, from a fact's completion",
		func(s *Settings) *time.Duration { return &s.Window }, func(Settings) time.Duration { return idempotency.DefaultWindow }),
	entry(TTLAfterWindowVar, "TTLAfterWindow", "TTLAfterWindow",
		Format(idempotency.DefaultTTLAfterWindow), "2h",
		"how long after the window a record may be deleted by DynamoDB's TTL",
		func(s *Settings) *time.Duration { return &s.TTLAfterWindow }, func(Settings) time.Duration { return idempotency.DefaultTTLAfterWindow }),
	entry(LeaseMaxVar, "LeaseMax", "LeaseMax",
		"Timeout", "40s",
		"the longest lease of a reservation",
		func(s *Settings) *time.Duration { return &s.LeaseMax }, func(s Settings) time.Duration { return s.Timeout }),
	entry(FinishBudgetVar, "FinishBudget", "FinishBudget",
		Format(idempotency.DefaultFinishBudget), "1500ms",
		"the time kept at the end of a lease to complete or release it",
		func(s *Settings) *time.Duration { return &s.FinishBudget }, func(Settings) time.Duration { return idempotency.DefaultFinishBudget }),
	entry(MinRemainingVar, "MinRemaining", "MinRemaining",
		fmt.Sprintf("FinishBudget + %s", Format(sqsbatch.DefaultEffectTime)), "4s",
		"the least time left before the deadline for a record to start",
		func(s *Settings) *time.Duration { return &s.MinRemaining }, func(s Settings) time.Duration { return sqsbatch.DefaultMinRemaining(s.FinishBudget) }),
	entry(CacheSizeVar, "CacheSize", "CacheSize",
		"0 (no cache)", "1000",
		"how many completed keys are kept in memory",
		func(s *Settings) *int { return &s.CacheSize }, none[int]),
	entry(PayloadIgnoreVar, "PayloadIgnore", "PayloadIgnore",
		"none", "meta.sentAt,traceId",
		"JSON fields (dotted paths) left out of the payload hash, comma-separated",
		func(s *Settings) *[]string { return &s.PayloadIgnore }, none[[]string]),
	entry(KeySecretVar, "KeySecret", "HashKeys",
		"none: keys stored as they are", "0123456789abcdef0123456789abcdef",
		"the secret under which record keys are stored as a keyed hash",
		func(s *Settings) *string { return &s.KeySecret }, none[string]),
	entry(TxTablesVar, "TxTables", "TransactionalTables",
		"none: transactional writes to any table", "Stock,Orders",
		"the tables a transactional effect may write (the idempotency table too, for its items other than records), comma-separated",
		func(s *Settings) *[]string { return &s.TxTables }, none[[]string]),
	entry(BatchConcurrencyVar, "BatchConcurrency", "BatchConcurrency",
		strconv.Itoa(DefaultMaxConcurrency), "4",
		"how many records of a batch run at once",
		func(s *Settings) *int { return &s.BatchConcurrency }, func(Settings) int { return DefaultMaxConcurrency }),
	entry(MaxMessageBytesVar, "MaxMessageBytes", "MaxMessageBytes",
		strconv.Itoa(sqsbatch.DefaultMaxMessageBytes), "65536",
		"the largest business message accepted, in bytes",
		func(s *Settings) *int { return &s.MaxMessageBytes }, func(Settings) int { return sqsbatch.DefaultMaxMessageBytes }),
	entry(DeliveryVar, "Delivery", "RawMessageDelivery",
		string(sqsbatch.Envelope), string(sqsbatch.Raw),
		"how bodies arrive: envelope (SNS notifications), raw or auto",
		func(s *Settings) *sqsbatch.Delivery { return &s.Delivery }, func(Settings) sqsbatch.Delivery { return sqsbatch.Envelope }),
	entry(FIFOVar, "FIFO", "FifoTopic (or StandardQueue)",
		"false", "true",
		"whether the queue is a FIFO queue",
		func(s *Settings) *bool { return &s.FIFO }, none[bool]),
	entry(MaxReceiveCountVar, "MaxReceiveCount", "MaxReceiveCount",
		strconv.Itoa(DefaultMaxReceiveCount), "3",
		"the queue's maxReceiveCount, after which SQS moves a message to the dead-letter queue",
		func(s *Settings) *int { return &s.MaxReceiveCount }, func(Settings) int { return DefaultMaxReceiveCount }),
	entry(ConsumerVar, "Consumer", "the construct id",
		"the Lambda function's name", "Shop/ReserveStock",
		"the consumer's name in logs and metrics",
		func(s *Settings) *string { return &s.Consumer }, none[string]),
	entry(MetricsNamespaceVar, "MetricsNamespace", "MetricsNamespace",
		sqsbatch.DefaultMetricsNamespace, "Shop",
		"the CloudWatch namespace of the metrics",
		func(s *Settings) *string { return &s.MetricsNamespace }, func(Settings) string { return sqsbatch.DefaultMetricsNamespace }),
}

// Field is one setting of the contract: the variable that carries it, the
// Settings field it fills, the construct prop that sets it, and how it is
// written.
type Field struct {
	// Var is the environment variable ("IDEMPOTENCY_WINDOW").
	Var string
	// Setting is the Settings field ("Window").
	Setting string
	// Prop is the IdempotentConsumer prop that sets it, as a message names
	// it ("Window", "HashKeys").
	Prop string
	// Encoding is how the value is written: "duration" (a Go duration,
	// "24h", "1500ms"), "count" (a decimal integer), "text", "list"
	// (comma-separated) or "bool" ("true" or "false").
	Encoding string
	// Default is the value that an absent variable takes, in words.
	Default string
	// Example is a valid value, encoded, that is not the default.
	Example string
	// Doc says what the setting is, in a phrase.
	Doc string

	encode     func(Settings) string
	decode     func(*Settings, string) error
	setDefault func(*Settings)
}

// Fields returns every setting of the contract, in the order of Settings.
func Fields() []Field { return append([]Field(nil), fields...) }

// FieldOf returns the entry of the variable name, and whether there is one.
func FieldOf(name string) (Field, bool) {
	for _, f := range fields {
		if f.Var == name {
			return f, true
		}
	}
	return Field{}, false
}

// none is the default of a setting whose default is its zero value.
func none[T any](Settings) (zero T) { return zero }

// entry makes the Field of a setting of type T, at *p(s), whose default is
// def of the settings above it; T's type gives the encoding.
func entry[T any](name, setting, prop, defaultDoc, example, doc string, p func(*Settings) *T, def func(Settings) T) Field {
	f := Field{Var: name, Setting: setting, Prop: prop, Default: defaultDoc, Example: example, Doc: doc,
		setDefault: func(s *Settings) { *p(s) = def(*s) }}
	var enc func(T) string
	var dec func(string) (T, error)
	switch any(new(T)).(type) {
	case *time.Duration:
		f.Encoding = "duration"
		enc = func(v T) string { return Format(any(v).(time.Duration)) }
		dec = func(v string) (T, error) {
			d, err := time.ParseDuration(v)
			if err != nil {
				return *new(T), fmt.Errorf("%s=%q: want a Go duration such as \"24h\" or \"1500ms\"", name, v)
			}
			return any(d).(T), nil
		}
	case *int:
		f.Encoding = "count"
		enc = func(v T) string { return strconv.Itoa(any(v).(int)) }
		dec = func(v string) (T, error) {
			n, err := strconv.Atoi(v)
			if err != nil {
				return *new(T), fmt.Errorf("%s=%q: want a whole number", name, v)
			}
			return any(n).(T), nil
		}
	case *bool:
		// Exactly as Encode writes them: a variable that says more is a
		// mistake to report, not a truth value to guess (strconv.ParseBool
		// would take "1", "t" and "TRUE").
		f.Encoding = "bool"
		enc = func(v T) string { return strconv.FormatBool(any(v).(bool)) }
		dec = func(v string) (T, error) {
			if v != "true" && v != "false" {
				return *new(T), fmt.Errorf("%s=%q: want \"true\" or \"false\"", name, v)
			}
			return any(v == "true").(T), nil
		}
	case *[]string:
		f.Encoding = "list"
		enc = func(v T) string { return strings.Join(any(v).([]string), ",") }
		dec = func(v string) (T, error) { return any(strings.Split(v, ",")).(T), nil }
	case *string:
		f.Encoding = "text"
		enc = func(v T) string { return any(v).(string) }
		dec = func(v string) (T, error) { return any(v).(T), nil }
	case *sqsbatch.Delivery:
		f.Encoding = "text"
		enc = func(v T) string { return string(any(v).(sqsbatch.Delivery)) }
		dec = func(v string) (T, error) { return any(sqsbatch.Delivery(v)).(T), nil }
	default:
		panic(fmt.Sprintf("contract: no encoding for the type of %s", setting)) // a programming error in the list above, caught by every test
	}
	f.encode = func(s Settings) string { return enc(*p(&s)) }
	f.decode = func(s *Settings, v string) error {
		x, err := dec(v)
		if err == nil {
			*p(s) = x
		}
		return err
	}
	return f
}
