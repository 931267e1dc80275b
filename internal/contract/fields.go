package contract

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	pub "github.com/idempotent-consumer/idempotent-consumer/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
)

// fields is the contract: one entry per setting, in the order in which
// defaults are applied (a default may depend on an entry above it: LeaseMax
// on Timeout, MinRemaining on FinishBudget). A new setting is a field of
// Settings and one entry here; its cross-field rules, if any, go in
// Problems. When users set it, a prop of the entry's Prop name and of the
// setting's kind on IdempotentConsumerProps is all the construct needs: it
// reads such props by their name (constructs/consumer/runtime.go).
var fields = []Field{
	entry(TableVar, "Table", "Table",
		"none: required", "shop-idempotency",
		"the DynamoDB idempotency table's name",
		func(s *Settings) *string { return &s.Table }, none[string]),
	tableDesign(entry(PartitionKeyVar, "TablePartitionKey", "TablePartitionKey",
		schema.Key, "PK",
		"the name of the table's partition key attribute (a string)",
		func(s *Settings) *string { return &s.TablePartitionKey }, func(Settings) string { return schema.Key })),
	tableDesign(entry(SortKeyVar, "TableSortKey", "TableSortKey",
		"none: a table without a sort key", "SK",
		"the name of the table's sort key attribute (a string)",
		func(s *Settings) *string { return &s.TableSortKey }, none[string])),
	tableDesign(entry(RecordKeyInVar, "TableRecordKeyIn", "TableKeyInSortKey",
		string(KeyInPartition), string(KeyInSort),
		"the key attribute that holds the record key \"<namespace>#<key>\": partition or sort",
		func(s *Settings) *KeyPlace { return &s.TableRecordKeyIn }, func(Settings) KeyPlace { return KeyInPartition })),
	tableDesign(entry(FixedKeyValueVar, "TableFixedKeyValue", "TableFixedKeyValue",
		"none: required with a sort key", "IDEMPOTENCY",
		"the value of the table's other key on every record: the sort key's, or the partition key's with the record key in the sort key",
		func(s *Settings) *string { return &s.TableFixedKeyValue }, none[string])),
	tableDesign(entry(TTLAttributeVar, "TableTTLAttribute", "TableTTLAttribute",
		schema.TTL, "expiry",
		"the attribute the table's TTL is enabled on",
		func(s *Settings) *string { return &s.TableTTLAttribute }, func(Settings) string { return schema.TTL })),
	entry(NamespaceVar, "Namespace", "Namespace",
		"none: required", "reserve",
		"the prefix of every key, \"<namespace>#<key>\"",
		func(s *Settings) *string { return &s.Namespace }, none[string]),
	entry(TimeoutVar, "Timeout", "Timeout",
		Format(defaultTimeout), "12m",
		"the function's timeout",
		func(s *Settings) *time.Duration { return &s.Timeout }, func(Settings) time.Duration { return defaultTimeout }),
	entry(WindowVar, "Window", "Window",
		Format(limits.DefaultWindow), "36h",
		"the business window, from a fact's completion",
		func(s *Settings) *time.Duration { return &s.Window }, func(Settings) time.Duration { return limits.DefaultWindow }),
	entry(TTLAfterWindowVar, "TTLAfterWindow", "TTLAfterWindow",
		Format(limits.DefaultTTLAfterWindow), "2h",
		"how long after the window a record may be deleted by DynamoDB's TTL",
		func(s *Settings) *time.Duration { return &s.TTLAfterWindow }, func(Settings) time.Duration { return limits.DefaultTTLAfterWindow }),
	entry(LeaseMaxVar, "LeaseMax", "LeaseMax",
		"Timeout", "40s",
		"the longest lease of a reservation",
		func(s *Settings) *time.Duration { return &s.LeaseMax }, func(s Settings) time.Duration { return s.Timeout }),
	entry(FinishBudgetVar, "FinishBudget", "FinishBudget",
		Format(limits.DefaultFinishBudget), "1500ms",
		"the time kept at the end of a lease to complete or release it",
		func(s *Settings) *time.Duration { return &s.FinishBudget }, func(Settings) time.Duration { return limits.DefaultFinishBudget }),
	entry(MinRemainingVar, "MinRemaining", "MinRemaining",
		fmt.Sprintf("FinishBudget + %s", Format(DefaultEffectTime)), "4s",
		"the least time left before the deadline for a record to start",
		func(s *Settings) *time.Duration { return &s.MinRemaining }, func(s Settings) time.Duration { return DefaultMinRemaining(s.FinishBudget) }),
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
		strconv.Itoa(DefaultMaxMessageBytes), "65536",
		"the largest business message accepted, in bytes",
		func(s *Settings) *int { return &s.MaxMessageBytes }, func(Settings) int { return DefaultMaxMessageBytes }),
	quietDefault(entry(SourceVar, "Source", "the construct (IdempotentConsumer: queue; IdempotentStreamConsumer: its stream's; IdempotentEndpoint: http)",
		string(SourceQueue), string(SourceKinesis),
		"what feeds the consumer: "+sourceNames(),
		func(s *Settings) *Source { return &s.Source }, func(Settings) Source { return SourceQueue })),
	quietDefault(entry(StreamImagesVar, "StreamImages", "OldImage",
		string(ImagesNew), string(ImagesNewAndOld),
		"the images of a DynamoDB stream record handed to the function: new, or new-and-old",
		func(s *Settings) *Images { return &s.StreamImages }, func(Settings) Images { return ImagesNew })),
	entry(StreamRemovesVar, "StreamRemoves", "Removes",
		"none: required for a DynamoDB stream", string(RemoveRun),
		"what a DynamoDB stream consumer does with REMOVE records: run, skip, or skip-expired (skip TTL expiries, run the deletes of callers)",
		func(s *Settings) *Removes { return &s.StreamRemoves }, none[Removes]),
	entry(DeliveryVar, "Delivery", "RawMessageDelivery",
		string(Envelope), string(Raw),
		"what the bodies are: envelope (SNS notifications), raw (raw SNS delivery, or producers that send to the queue), auto, eventbridge (events of an EventBridge rule) or s3 (S3 event notifications)",
		func(s *Settings) *Delivery { return &s.Delivery }, func(Settings) Delivery { return Envelope }),
	entry(FIFOVar, "FIFO", "FifoTopic (or StandardQueue)",
		"false", "true",
		"whether the queue is a FIFO queue",
		func(s *Settings) *bool { return &s.FIFO }, none[bool]),
	entry(MaxReceiveCountVar, "MaxReceiveCount", "MaxReceiveCount",
		strconv.Itoa(DefaultMaxReceiveCount), "3",
		"the queue's maxReceiveCount, after which SQS moves a message to the dead-letter queue",
		func(s *Settings) *int { return &s.MaxReceiveCount }, func(Settings) int { return DefaultMaxReceiveCount }),
	entry(BackoffBaseVar, "BackoffBase", "BackoffBase",
		Format(DefaultBackoffBase), "2m",
		"the first delay of a failed record's backoff, doubled on each receive (0: off, back after the queue's visibility timeout)",
		func(s *Settings) *time.Duration { return &s.BackoffBase }, func(Settings) time.Duration { return DefaultBackoffBase }),
	entry(BackoffCapVar, "BackoffCap", "BackoffCap",
		Format(DefaultBackoffCap), "30m",
		"the longest delay of a failed record's backoff (at most 12h)",
		func(s *Settings) *time.Duration { return &s.BackoffCap }, func(Settings) time.Duration { return DefaultBackoffCap }),
	entry(BackoffFIFOCapVar, "BackoffFIFOCap", "BackoffFIFOCap",
		Format(DefaultBackoffFIFOCap), "5m",
		"the longest delay of a failed record's backoff on a FIFO queue, where it holds its message group",
		func(s *Settings) *time.Duration { return &s.BackoffFIFOCap }, func(Settings) time.Duration { return DefaultBackoffFIFOCap }),
	entry(ConsumerVar, "Consumer", "the construct id",
		"the Lambda function's name", "Shop/ReserveStock",
		"the consumer's name in logs and metrics",
		func(s *Settings) *string { return &s.Consumer }, none[string]),
	entry(MetricsNamespaceVar, "MetricsNamespace", "MetricsNamespace",
		pub.DefaultMetricsNamespace, "Shop",
		"the CloudWatch namespace of the metrics",
		func(s *Settings) *string { return &s.MetricsNamespace }, func(Settings) string { return pub.DefaultMetricsNamespace }),
}

func init() { fields = append(fields, httpFields...) } // source_http.go

// Field is one setting of the contract: the variable that carries it, the
// Settings field it fills, the construct prop that sets it, and how it is
// written.
type Field struct {
	// Var is the environment variable ("IDEMPOTENCY_WINDOW").
	Var string
	// Setting is the Settings field ("Window").
	Setting string
	// Prop is the IdempotentConsumer prop that sets it, as a message names
	// it ("Window", "HashKeys"). When it is the name of a prop of the
	// setting's kind, the construct reads the setting from it by that name;
	// the construct lists the others with their reasons.
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
	// set sets the setting to a value of its Go type, and reports whether
	// the value was of that type.
	set func(*Settings, any) bool
	// typ is the setting's Go type.
	typ reflect.Type
	// omitDefault: Encode leaves the value out when it is the default (see
	// tableDesign).
	omitDefault bool
	// design: the entry is of the table's design (tableDesign), which
	// DecodeTable reads.
	design bool
}

// tableDesign marks an entry of the table's design, which Encode writes
// only when it is not the default: the design of the table the construct
// creates is the one a handler assumes without a word, so that its
// environment (and every template of a consumer on such a table) says
// nothing of it, and a handler deployed by other means on such a table
// needs no variable for it. Its defaults depend on no other setting.
func tableDesign(f Field) Field {
	f.omitDefault, f.design = true, true
	return f
}

// isDefault reports whether s holds f's default, as the settings above it
// in s make it (ClientAttribute's follows the source and the provider).
func (f Field) isDefault(s Settings) bool {
	d := s
	f.setDefault(&d)
	return f.encode(d) == f.encode(s)
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

// Fill returns the Settings in which each entry of Fields takes the value
// that value gives it or, when value gives none (ok false), its default:
// entry by entry, in the order of Fields, so that a default follows the
// values given above it (LeaseMax defaults to the Timeout given,
// MinRemaining to the FinishBudget given). A value is of the type of the
// Settings field (time.Duration, int, string, []string, bool or
// Delivery); another is a programming error of the caller, on
// which Fill panics. Fill checks no rule: Problems does.
//
// It is how the construct maps its props onto the settings: one code path
// for every entry whose prop is a plain value of the setting's kind.
func Fill(value func(Field) (v any, ok bool)) Settings {
	var s Settings
	for _, f := range fields {
		v, ok := value(f)
		if !ok {
			f.setDefault(&s)
			continue
		}
		if !f.set(&s, v) {
			panic(fmt.Sprintf("contract.Fill: %s is a %s, not a %T", f.Setting, f.typ, v))
		}
	}
	return s
}

// none is the default of a setting whose default is its zero value.
func none[T any](Settings) (zero T) { return zero }

// entry makes the Field of a setting of type T, at *p(s), whose default is
// def of the settings above it; T's type gives the encoding.
func entry[T any](name, setting, prop, defaultDoc, example, doc string, p func(*Settings) *T, def func(Settings) T) Field {
	f := Field{Var: name, Setting: setting, Prop: prop, Default: defaultDoc, Example: example, Doc: doc,
		setDefault: func(s *Settings) { *p(s) = def(*s) },
		set: func(s *Settings, v any) bool {
			x, ok := v.(T)
			if ok {
				*p(s) = x
			}
			return ok
		},
		typ: reflect.TypeFor[T]()}
	var enc func(T) string
	var dec func(string) (T, error)
	f.Encoding, enc, dec = codec[T](name, setting)
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

// codec is the encoding of a setting of type T, carried in the variable
// name: its name in the contract's table, and how a value is written and
// read back.
func codec[T any](name, setting string) (encoding string, enc func(T) string, dec func(string) (T, error)) {
	switch any(new(T)).(type) {
	case *time.Duration:
		encoding = "duration"
		enc = func(v T) string { return Format(any(v).(time.Duration)) }
		dec = func(v string) (T, error) {
			d, err := time.ParseDuration(v)
			if err != nil {
				return *new(T), fmt.Errorf("%s=%q: want a Go duration such as \"24h\" or \"1500ms\"", name, v)
			}
			return any(d).(T), nil
		}
	case *int:
		encoding = "count"
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
		encoding = "bool"
		enc = func(v T) string { return strconv.FormatBool(any(v).(bool)) }
		dec = func(v string) (T, error) {
			if v != "true" && v != "false" {
				return *new(T), fmt.Errorf("%s=%q: want \"true\" or \"false\"", name, v)
			}
			return any(v == "true").(T), nil
		}
	case *[]string:
		encoding = "list"
		enc = func(v T) string { return strings.Join(any(v).([]string), ",") }
		dec = func(v string) (T, error) { return any(strings.Split(v, ",")).(T), nil }
	default:
		// A string, or a type of string kind (KeyPlace, Source, Images,
		// Removes, Delivery): the text as it is.
		if reflect.TypeFor[T]().Kind() != reflect.String {
			panic(fmt.Sprintf("contract: no encoding for the type of %s", setting)) // a programming error in the list above, caught by every test
		}
		encoding = "text"
		enc = func(v T) string { return reflect.ValueOf(v).String() }
		dec = func(v string) (T, error) {
			var x T
			reflect.ValueOf(&x).Elem().SetString(v)
			return x, nil
		}
	}
	return encoding, enc, dec
}
