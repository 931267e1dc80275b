package consumer

import (
	"fmt"
	"reflect"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/family"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// The props → runtime settings mapping is derived from the contract's list
// (contract.Fields): every entry whose Prop names a field of
// IdempotentConsumerProps of a plain kind that reads into the setting's
// type (directProps) is read by one code path (readProp) and set with
// contract.Fill, so that a new setting with a prop of its own needs no code
// here. The rest are explicitSettings, each with the reason, and the
// construct's own defaults are constructDefaults.
// TestEverySettingIsReadOrExplicit fails for an entry that is neither.

// explicitSettings are the runtime settings that the construct does not
// read from a prop of their own kind, and why. computeRuntime sets the
// first five after contract.Fill (no default of the contract depends on
// them: TestNoDefaultFollowsAnExplicitSetting); the builders and compute
// set the others.
var explicitSettings = map[string]string{
	"Table":           "the table's name is a token, known once the table exists: tablePlaceholder until the builder sets it",
	"Namespace":       "its default is the construct id's, lowercased, without the characters the contract refuses in a namespace (limits.NamespaceAllows), not the contract's (it has none)",
	"Delivery":        "the source decides it (source.go, settings.delivery): eventbridge for a rule, s3 for a bucket, raw for direct producers; for a topic RawMessageDelivery, a bool, raw when true and the contract's envelope otherwise",
	"FIFO":            "FifoTopic and StandardQueue decide together whether the queue is FIFO (fifoKind)",
	"Consumer":        "the construct id, until the builder knows the construct's path",
	"KeySecret":       "HashKeys is a bool: the construct creates the secret, whose reference the builder writes",
	"TxTables":        "TransactionalTables are tables: the builder writes their names (tokens) and those GrantTransactionalWrites declares",
	"MaxReceiveCount": "the queue's redrive count, known once the queues are computed (a given queue's own, or the MaxReceiveCount prop)",
	"Source":          "a queue consumer's, the contract's default (SourceQueue), which Encode does not write: no prop chooses it",
	"StreamImages":    "a stream consumer's setting (the stream construct's OldImage), which a queue consumer does not read",
	"StreamRemoves":   "a stream consumer's setting (the stream construct's Removes), which a queue consumer does not read",
	// The table's design: a given Table's own, read from a table of the app,
	// over the props that declare an imported one's (computeDesign).
	"TablePartitionKey":  designReason,
	"TableSortKey":       designReason,
	"TableRecordKeyIn":   "TableKeyInSortKey is a bool: the record key in the sort key when true (computeDesign)",
	"TableFixedKeyValue": "its default follows the Namespace and where the record key is, with a sort key only (computeDesign)",
	"TableTTLAttribute":  designReason,
	// An HTTP endpoint's settings (the endpoint construct's), which a queue
	// consumer does not read.
	"WebhookProvider": httpReason, "WebhookSecret": httpReason, "ClientAttribute": httpReason,
	"ReplayHeaders": httpReason, "HashHeaders": httpReason, "MaxRequestBytes": httpReason,
	"StepName": "a step's name (the step construct's StepName, contract.SourceStep), which a queue consumer does not read",
}

// httpReason is why an HTTP endpoint's settings are explicit.
const httpReason = "an HTTP endpoint's setting (contract.SourceHTTP), which a queue consumer does not read"

// designReason is why the table's key names and TTL attribute are
// explicit.
const designReason = "a given Table of the app says it (its key schema, its TTL), over the prop, which declares an imported table's (computeDesign)"

// constructDefaults are the construct's defaults for settings it reads from
// their props, where they are not the contract's (which are those of a
// handler whose environment does not say), and why.
var constructDefaults = map[string]struct {
	why string
	def func(*settings) any
}{
	"BatchConcurrency": {"the whole batch of the event source at once, up to contract.DefaultMaxConcurrency (the batch size is the construct's)",
		func(s *settings) any { return contract.DefaultConcurrency(s.batchSize) }},
}

// directProps are the props that the construct reads into the runtime
// settings, by the setting: each entry of contract.Fields whose Prop is a
// field of IdempotentConsumerProps of a plain kind (propKinds) that reads
// into the Settings field's type, but explicitSettings and the shared
// props, which the family's core reads (sharedSetting).
var directProps = func() map[string]reflect.StructField {
	props, runtime := reflect.TypeFor[IdempotentConsumerProps](), reflect.TypeFor[contract.Settings]()
	out := map[string]reflect.StructField{}
	for _, f := range contract.Fields() {
		if sharedSetting(f) {
			continue
		}
		prop, ok := props.FieldByName(f.Prop)
		setting, _ := runtime.FieldByName(f.Setting)
		if _, explicit := explicitSettings[f.Setting]; ok && !explicit && propKinds[prop.Type] == setting.Type {
			out[f.Setting] = prop
		}
	}
	return out
}()

// sharedSetting says the setting of f is set by a shared prop
// (core.Props), which the family's core reads for every construct
// (family.Resolve), or by the core itself (the table's design).
func sharedSetting(f contract.Field) bool {
	_, ok := reflect.TypeFor[core.Props]().FieldByName(f.Prop)
	return ok
}

// propKinds are the plain kinds of props, each with the Go type of the
// setting it reads into.
var propKinds = map[reflect.Type]reflect.Type{
	reflect.TypeFor[awscdk.Duration](): reflect.TypeFor[time.Duration](),
	reflect.TypeFor[*float64]():        reflect.TypeFor[int](),
	reflect.TypeFor[*string]():         reflect.TypeFor[string](),
	reflect.TypeFor[*[]*string]():      reflect.TypeFor[[]string](),
	reflect.TypeFor[*bool]():           reflect.TypeFor[bool](),
}

// runtimeValue is the value of the setting of f that the construct gives
// contract.Fill: its prop, read by readProp, else the construct's default,
// else none (the contract's default).
func (p *IdempotentConsumerProps) runtimeValue(f contract.Field, s *settings, rd *propReader) (any, bool) {
	if prop, ok := directProps[f.Setting]; ok {
		if v, ok := readProp(f.Prop, reflect.ValueOf(p).Elem().FieldByIndex(prop.Index).Interface(), rd); ok {
			return v, true
		}
	}
	if d, ok := constructDefaults[f.Setting]; ok {
		return d.def(s), true
	}
	return nil, false
}

// readProp reads the value v of the prop name, of a plain kind, into the
// type of its setting: a duration or a whole number that is a token, or not
// whole, is a problem (in rd); ok is false for a nil prop and a problem.
// Texts and lists are taken as they are (a token among them reaches the
// environment and resolves at deployment); a nil in a list is an empty name,
// which the rules refuse.
func readProp(name string, v any, rd *propReader) (any, bool) {
	switch v := v.(type) {
	case awscdk.Duration:
		return rd.ReadDuration(name, v)
	case *float64:
		return rd.ReadCount(name, v)
	case *string:
		if v != nil {
			return *v, true
		}
	case *[]*string:
		if v != nil && len(*v) > 0 {
			out := make([]string, len(*v))
			for i, s := range *v {
				out[i] = family.Str(s, "")
			}
			return out, true
		}
	case *bool:
		if v != nil {
			return *v, true
		}
	case nil: // an interface prop not given
	default:
		panic(fmt.Sprintf("consumer: %s is a %T, not a plain kind of prop", name, v)) // directProps lists only those
	}
	return nil, false
}
