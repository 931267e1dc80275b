package stream

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/bundle"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore/schema"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// Lambda's bounds on a stream event source
// (https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-parameters.html,
// and the DynamoDB Streams page of the same name).
const (
	maxBatchSize             = 10000
	maxBatchingWindow        = 300 * time.Second
	maxRetryAttempts         = 10000
	minRecordAge             = 60 * time.Second
	maxRecordAge             = 604800 * time.Second
	maxParallelizationFactor = 10
)

// settings are the props resolved: every default applied once. The
// builders read only these.
type settings struct {
	id               string
	entry, entryRoot string
	goarch           string
	architecture     awslambda.Architecture
	memorySize       float64
	logRetention     awslogs.RetentionDays
	removalPolicy    awscdk.RemovalPolicy
	runtime          contract.Settings
	table            awsdynamodb.ITable // given; nil: created

	startingPosition      awslambda.StartingPosition
	batchSize             float64
	batchingWindow        time.Duration
	bisect                bool
	retryAttempts         float64
	maxRecordAge          time.Duration
	parallelizationFactor float64
	viewType              string // the source table's stream view type, "" when unknown
	iteratorAgeAlarm      time.Duration
	dashboard             bool
	// unreadable are the props given as values the construct cannot read
	// at synth (tokens, fractions).
	unreadable []string
}

// resolve computes the settings and checks them: every problem at once.
func (p *IdempotentStreamConsumerProps) resolve(id string) (*settings, error) {
	s := p.compute(id)
	if problems := s.problems(p); len(problems) > 0 {
		return nil, fmt.Errorf("IdempotentStreamConsumer %q: invalid props:\n  - %s", id, strings.Join(problems, "\n  - "))
	}
	return s, nil
}

func (p *IdempotentStreamConsumerProps) compute(id string) *settings {
	s := &settings{id: id, table: p.Table}
	s.entry, s.entryRoot = deref(p.Entry), deref(p.EntryRoot)
	s.architecture = p.Architecture
	if s.architecture == nil {
		s.architecture = awslambda.Architecture_ARM_64()
	}
	s.goarch, _ = bundle.Goarch(*s.architecture.Name())
	s.memorySize = s.number("MemorySize", p.MemorySize, DefaultMemorySize)
	s.logRetention = p.LogRetention
	if s.logRetention == "" {
		s.logRetention = awslogs.RetentionDays_ONE_MONTH
	}
	s.removalPolicy = p.RemovalPolicy
	if s.removalPolicy == "" {
		s.removalPolicy = awscdk.RemovalPolicy_RETAIN
	}
	s.startingPosition = p.StartingPosition
	if s.startingPosition == "" {
		s.startingPosition = awslambda.StartingPosition_TRIM_HORIZON
	}
	s.batchSize = s.number("BatchSize", p.BatchSize, DefaultBatchSize)
	s.batchingWindow = s.duration("MaxBatchingWindow", p.MaxBatchingWindow, 0)
	s.bisect = p.BisectBatchOnError == nil || *p.BisectBatchOnError
	s.retryAttempts = s.number("RetryAttempts", p.RetryAttempts, DefaultRetryAttempts)
	s.maxRecordAge = s.duration("MaxRecordAge", p.MaxRecordAge, DefaultMaxRecordAge)
	s.parallelizationFactor = s.number("ParallelizationFactor", p.ParallelizationFactor, DefaultParallelizationFactor)
	s.iteratorAgeAlarm = s.duration("IteratorAgeAlarmThreshold", p.IteratorAgeAlarmThreshold, DefaultIteratorAgeAlarm)
	s.dashboard = p.Dashboard != nil && *p.Dashboard
	if p.SourceTable != nil {
		s.viewType = viewTypeOf(p.SourceTable)
	}

	source := contract.SourceKinesis
	if p.SourceTable != nil {
		source = contract.SourceDynamoDBStreams
	}
	images := contract.ImagesNew
	if p.OldImage != nil && *p.OldImage {
		images = contract.ImagesNewAndOld
	}
	timeout := s.duration("Timeout", p.Timeout, DefaultTimeout)
	values := map[string]any{
		contract.TableVar:            tablePlaceholder,
		contract.NamespaceVar:        namespaceOf(p.Namespace, id),
		contract.TimeoutVar:          timeout,
		contract.ConsumerVar:         id, // the construct's path, once it exists
		contract.SourceVar:           source,
		contract.StreamImagesVar:     images,
		contract.StreamRemovesVar:    p.Removes,
		contract.BatchConcurrencyVar: contract.DefaultConcurrency(int(s.batchSize)),
	}
	if p.Window != nil {
		values[contract.WindowVar] = s.duration("Window", p.Window, 0)
	}
	if p.BatchConcurrency != nil {
		values[contract.BatchConcurrencyVar] = int(s.number("BatchConcurrency", p.BatchConcurrency, 0))
	}
	if p.CacheSize != nil {
		values[contract.CacheSizeVar] = int(s.number("CacheSize", p.CacheSize, 0))
	}
	if p.PayloadIgnore != nil {
		var fields []string
		for _, f := range *p.PayloadIgnore {
			fields = append(fields, deref(f))
		}
		values[contract.PayloadIgnoreVar] = fields
	}
	if p.MetricsNamespace != nil {
		values[contract.MetricsNamespaceVar] = *p.MetricsNamespace
	}
	s.runtime = contract.Fill(func(f contract.Field) (any, bool) {
		v, ok := values[f.Var]
		return v, ok
	})
	return s
}

// tablePlaceholder is the runtime Table until the table exists: its name is
// a token (function.New writes the table's name).
const tablePlaceholder = "idempotency-table"

// problems are every rule the props and settings break: the contract's, the
// stream's and the event source's. Pure: it writes nothing.
func (s *settings) problems(p *IdempotentStreamConsumerProps) []string {
	out := append([]string(nil), s.unreadable...)
	bad := func(f string, args ...any) { out = append(out, fmt.Sprintf(f, args...)) }
	if s.entry == "" {
		bad("Entry is empty; give the directory of the handler's Go main package (it calls streambatch.StartKinesis or streambatch.StartDynamoDB)")
	}
	if s.goarch == "" {
		bad("Architecture %s is not one the construct builds for; give ARM_64 or X86_64", *s.architecture.Name())
	}
	switch {
	case p.Stream == nil && p.SourceTable == nil:
		bad("neither Stream nor SourceTable is given; give the Kinesis stream to consume, or the DynamoDB table whose stream to consume")
	case p.Stream != nil && p.SourceTable != nil:
		bad("both Stream and SourceTable are given; one consumer has one source: give one, and a second consumer for the other")
	case p.Stream != nil:
		if p.OldImage != nil && *p.OldImage {
			bad("OldImage is set, but the source is a Kinesis stream, whose records have no images; leave it unset, or consume a table's stream (SourceTable)")
		}
		if p.Removes != "" {
			bad("Removes is %q, but the source is a Kinesis stream, which has no REMOVE records; leave it unset", p.Removes)
		}
	case p.SourceTable != nil:
		out = append(out, s.viewProblems(p.SourceTable)...)
	}
	if s.startingPosition != awslambda.StartingPosition_TRIM_HORIZON && s.startingPosition != awslambda.StartingPosition_LATEST {
		bad("StartingPosition %s is not offered; give TRIM_HORIZON (the default) or LATEST", s.startingPosition)
	}
	if s.batchSize < 1 || s.batchSize > maxBatchSize || s.batchSize != math.Trunc(s.batchSize) {
		bad("BatchSize %v is out of range: Lambda takes 1 to %d records per batch from a stream; give one in that range (default %d)", s.batchSize, maxBatchSize, DefaultBatchSize)
	}
	if s.batchingWindow < 0 || s.batchingWindow > maxBatchingWindow {
		bad("MaxBatchingWindow %s is out of range: Lambda takes at most %s; give one in that range", contract.Format(s.batchingWindow), contract.Format(maxBatchingWindow))
	}
	if s.retryAttempts < 0 || s.retryAttempts > maxRetryAttempts || s.retryAttempts != math.Trunc(s.retryAttempts) {
		bad("RetryAttempts %v is out of range: give 0 to %d (default %d); unlimited retries (-1) block the shard until the failing record leaves the stream", s.retryAttempts, maxRetryAttempts, DefaultRetryAttempts)
	}
	switch limit := s.runtime.Window - idempotency.ClockSkewMargin; {
	case s.maxRecordAge < minRecordAge || s.maxRecordAge > maxRecordAge:
		bad("MaxRecordAge %s is out of range: Lambda takes %s to %s (unlimited, -1, is refused: a failing record would block its shard until it leaves the stream); give one in that range (default %s)",
			contract.Format(s.maxRecordAge), contract.Format(minRecordAge), contract.Format(maxRecordAge), contract.Format(DefaultMaxRecordAge))
	case s.maxRecordAge >= limit:
		bad("MaxRecordAge %s is not less than Window %s less the clock-skew margin %s: Lambda could deliver a record as old as the business window, which the handler refuses as expired (its fact's record may be gone); give a MaxRecordAge below %s, or a longer Window",
			contract.Format(s.maxRecordAge), contract.Format(s.runtime.Window), contract.Format(idempotency.ClockSkewMargin), contract.Format(limit))
	}
	if s.parallelizationFactor < 1 || s.parallelizationFactor > maxParallelizationFactor || s.parallelizationFactor != math.Trunc(s.parallelizationFactor) {
		bad("ParallelizationFactor %v is out of range: Lambda takes 1 to %d batches per shard at once; give one in that range (default 1)", s.parallelizationFactor, maxParallelizationFactor)
	}
	if s.iteratorAgeAlarm <= 0 {
		bad("IteratorAgeAlarmThreshold %s is not positive; give the iterator age the consumer may lag by (default %s)", contract.Format(s.iteratorAgeAlarm), contract.Format(DefaultIteratorAgeAlarm))
	}
	if s.table != nil {
		out = append(out, table.Problems(s.table, false)...)
		if k := table.KeysOf(s.table); k.Known && (k.Partition != schema.Key || k.Sort != "") {
			bad("Table's key schema is %s; the stream consumer writes its records under the construct's design (a string partition key %q, no sort key); give a table of that design, or leave Table nil for one of the construct's own", k, schema.Key)
		}
	}
	out = append(out, s.runtime.Problems()...)
	return out
}

// viewProblems checks the source table's stream: it must exist, and carry
// the images the consumer asks for.
func (s *settings) viewProblems(t awsdynamodb.ITable) []string {
	if t.TableStreamArn() == nil {
		return []string{fmt.Sprintf("SourceTable %s has no stream; enable one (TableProps.Stream: NEW_IMAGE, or NEW_AND_OLD_IMAGES with OldImage), or import the table with its TableStreamArn", *t.Node().Path())}
	}
	want := []string{"NEW_IMAGE", "NEW_AND_OLD_IMAGES"}
	why := "the function is handed each change's new image"
	if s.runtime.StreamImages == contract.ImagesNewAndOld {
		want, why = []string{"NEW_AND_OLD_IMAGES"}, "OldImage asks for the old image of a MODIFY too"
	}
	if s.viewType == "" {
		return nil // imported: unknown at synth; the handler refuses a record without the image (a function error)
	}
	for _, w := range want {
		if s.viewType == w {
			return nil
		}
	}
	return []string{fmt.Sprintf("SourceTable %s has a stream of view type %s, but %s: give it the view type %s", *t.Node().Path(), s.viewType, why, strings.Join(want, " or "))}
}

// viewTypeOf reads the stream view type of a table of the app: "" when the
// table is imported, or says it in a token.
func viewTypeOf(t awsdynamodb.ITable) string {
	cfn, ok := t.Node().DefaultChild().(awsdynamodb.CfnTable)
	if !ok {
		return ""
	}
	if cfn.StreamSpecification() == nil {
		return ""
	}
	spec, ok := awscdk.Stack_Of(t).Resolve(cfn.StreamSpecification()).(map[string]any)
	if !ok {
		return ""
	}
	v, _ := spec["streamViewType"].(string)
	return v
}

// namespaceOf is the given namespace, or the construct id's: lowercased,
// without the characters a namespace cannot hold.
func namespaceOf(given *string, id string) string {
	if given != nil {
		return *given
	}
	var b strings.Builder
	for _, r := range strings.ToLower(id) {
		if idempotency.NamespaceAllows(r) && !unicode.IsSpace(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// number reads a count prop; a token is refused by name.
func (s *settings) number(name string, v *float64, def float64) float64 {
	if v == nil {
		return def
	}
	if *awscdk.Token_IsUnresolved(v) {
		s.unreadable = append(s.unreadable, fmt.Sprintf("%s is a token that CDK resolves only at deployment; the construct checks it at synth: give a number", name))
		return def
	}
	return *v
}

// duration reads a duration prop; a token is refused by name.
func (s *settings) duration(name string, d awscdk.Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	if *d.IsUnresolved() {
		s.unreadable = append(s.unreadable, fmt.Sprintf("%s is a token that CDK resolves only at deployment; the construct checks it at synth: give a duration", name))
		return def
	}
	return time.Duration(*d.ToMilliseconds(nil)) * time.Millisecond
}

func formatDuration(d time.Duration) string { return contract.Format(d) }
