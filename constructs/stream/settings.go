package stream

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskinesis"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/family"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// Lambda's bounds on a stream event source
// (https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-parameters.html,
// and the DynamoDB Streams page of the same name).
const (
	maxBatchSize             = 10000
	maxRetryAttempts         = 10000
	minRecordAge             = 60 * time.Second
	maxRecordAge             = 604800 * time.Second
	maxParallelizationFactor = 10
)

// kind is the stream consumer, to the family's core.
var kind = family.Kind{
	Name:        "IdempotentStreamConsumer",
	Noun:        "idempotent stream consumer",
	FunctionID:  ids.Function,
	Timeout:     family.DefaultTimeout,
	ReservedWhy: ", or leave it nil for none",
	InvokedBy:   "The function is only invoked synchronously, by the stream event-source mapping; a batch it gives up on goes to the mapping's on-failure destination, the construct's S3 bucket, with its records.",
}

// settings are the props resolved: every default applied once. The
// builders read only these.
type settings struct {
	*family.Settings

	startingPosition      awslambda.StartingPosition
	batchSize             float64
	batchingWindow        time.Duration
	bisect                bool
	retryAttempts         float64
	maxRecordAge          time.Duration
	parallelizationFactor float64
	failureRetention      time.Duration
	viewType              string // the source table's stream view type, "" when unknown
	retention             retention
	iteratorAgeAlarm      time.Duration
	// unreadable are the props given as values the construct cannot read
	// at synth (tokens, fractions).
	unreadable []string
	p          *IdempotentStreamConsumerProps
}

// resolve computes the settings and checks them: every problem at once.
func (p *IdempotentStreamConsumerProps) resolve(id string) (*settings, error) {
	s := p.compute(id)
	own, _ := family.Evaluate(s, rules)
	problems := append(append(s.unreadable, s.Problems()...), own...)
	if err := family.Fail(kind, id, problems); err != nil {
		return nil, err
	}
	return s, nil
}

func (p *IdempotentStreamConsumerProps) compute(id string) *settings {
	s := &settings{p: p}
	s.startingPosition = p.StartingPosition
	if s.startingPosition == "" {
		s.startingPosition = awslambda.StartingPosition_TRIM_HORIZON
	}
	s.batchSize = s.number("BatchSize", p.BatchSize, defaultBatchSize)
	s.batchingWindow = s.duration("MaxBatchingWindow", p.MaxBatchingWindow, 0)
	s.bisect = p.BisectBatchOnError == nil || *p.BisectBatchOnError
	s.retryAttempts = s.number("RetryAttempts", p.RetryAttempts, defaultRetryAttempts)
	s.maxRecordAge = s.duration("MaxRecordAge", p.MaxRecordAge, defaultMaxRecordAge)
	s.parallelizationFactor = s.number("ParallelizationFactor", p.ParallelizationFactor, defaultParallelizationFactor)
	s.failureRetention = s.duration("FailureRetention", p.FailureRetention, defaultFailureRetention)
	s.iteratorAgeAlarm = s.duration("IteratorAgeAlarmThreshold", p.IteratorAgeAlarmThreshold, defaultIteratorAgeAlarm)
	if p.SourceTable != nil {
		s.viewType = viewTypeOf(p.SourceTable)
	}
	s.retention = p.retention()
	own := p.runtimeValues(s)
	s.Settings = family.Resolve(kind, id, &p.Props, func(f contract.Field) (any, bool) {
		v, ok := own[f.Var]
		return v, ok
	})
	return s
}

// runtimeValues are the runtime settings the stream's own props set, by
// the contract's variable.
func (p *IdempotentStreamConsumerProps) runtimeValues(s *settings) map[string]any {
	source, images := contract.SourceKinesis, contract.ImagesNew
	if p.SourceTable != nil {
		source = contract.SourceDynamoDBStreams
	}
	if p.OldImage != nil && *p.OldImage {
		images = contract.ImagesNewAndOld
	}
	values := map[string]any{
		contract.SourceVar:           source,
		contract.StreamImagesVar:     images,
		contract.StreamRemovesVar:    p.Removes,
		contract.BatchConcurrencyVar: contract.DefaultConcurrency(int(s.batchSize)),
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
			fields = append(fields, family.Str(f, ""))
		}
		values[contract.PayloadIgnoreVar] = fields
	}
	return values
}

// rules are the stream consumer's own rules, after the family's.
var rules = []family.Rule[*settings]{
	{Reads: []string{"Stream", "SourceTable", "OldImage", "Removes"}, Check: family.Problem(sourceProblems)},
	{Reads: []string{"StartingPosition", "BatchSize", "MaxBatchingWindow", "RetryAttempts", "ParallelizationFactor"}, Check: family.Problem(eventSourceProblems)},
	{Reads: []string{"MaxRecordAge", "Window"}, Check: family.Problem(recordAgeProblems)},
	{Reads: []string{"MaxRecordAge", "Stream", "SourceTable"}, Check: family.Problem(retentionProblems)},
	{Reads: []string{"FailureRetention", "MaxRecordAge"}, Check: family.Problem(failureRetentionProblems)},
	{Reads: []string{"IteratorAgeAlarmThreshold"}, Check: family.Problem(iteratorAgeProblems)},
}

func sourceProblems(s *settings) []string {
	p := s.p
	switch {
	case p.Stream == nil && p.SourceTable == nil:
		return []string{"neither Stream nor SourceTable is given; give the Kinesis stream to consume, or the DynamoDB table whose stream to consume"}
	case p.Stream != nil && p.SourceTable != nil:
		return []string{"both Stream and SourceTable are given; one consumer has one source: give one, and a second consumer for the other"}
	case p.SourceTable != nil:
		return s.viewProblems(p.SourceTable)
	}
	var out []string
	if p.OldImage != nil && *p.OldImage {
		out = append(out, "OldImage is set, but the source is a Kinesis stream, whose records have no images; leave it unset, or consume a table's stream (SourceTable)")
	}
	if p.Removes != "" {
		out = append(out, fmt.Sprintf("Removes is %q, but the source is a Kinesis stream, which has no REMOVE records; leave it unset", p.Removes))
	}
	return out
}

func eventSourceProblems(s *settings) []string {
	var out []string
	bad := func(f string, args ...any) { out = append(out, fmt.Sprintf(f, args...)) }
	if s.startingPosition != awslambda.StartingPosition_TRIM_HORIZON && s.startingPosition != awslambda.StartingPosition_LATEST {
		bad("StartingPosition %s is not offered; give TRIM_HORIZON (the default) or LATEST", s.startingPosition)
	}
	if s.batchSize < 1 || s.batchSize > maxBatchSize || s.batchSize != math.Trunc(s.batchSize) {
		bad("BatchSize %v is out of range: Lambda takes 1 to %d records per batch from a stream; give one in that range (default %d)", s.batchSize, maxBatchSize, defaultBatchSize)
	}
	if s.batchingWindow < 0 || s.batchingWindow > family.MaxBatchingWindow {
		bad("MaxBatchingWindow %s is out of range: Lambda takes at most %s; give one in that range", contract.Format(s.batchingWindow), contract.Format(family.MaxBatchingWindow))
	}
	if s.retryAttempts < 0 || s.retryAttempts > maxRetryAttempts || s.retryAttempts != math.Trunc(s.retryAttempts) {
		bad("RetryAttempts %v is out of range: give 0 to %d (default %d); unlimited retries (-1) block the shard until the failing record leaves the stream", s.retryAttempts, maxRetryAttempts, defaultRetryAttempts)
	}
	if s.parallelizationFactor < 1 || s.parallelizationFactor > maxParallelizationFactor || s.parallelizationFactor != math.Trunc(s.parallelizationFactor) {
		bad("ParallelizationFactor %v is out of range: Lambda takes 1 to %d batches per shard at once; give one in that range (default 1)", s.parallelizationFactor, maxParallelizationFactor)
	}
	return out
}

func recordAgeProblems(s *settings) []string {
	switch limit := s.Runtime.Window - limits.ClockSkewMargin; {
	case s.maxRecordAge < minRecordAge || s.maxRecordAge > maxRecordAge:
		return []string{fmt.Sprintf("MaxRecordAge %s is out of range: Lambda takes %s to %s (unlimited, -1, is refused: a failing record would block its shard until it leaves the stream); give one in that range (default %s)",
			contract.Format(s.maxRecordAge), contract.Format(minRecordAge), contract.Format(maxRecordAge), contract.Format(defaultMaxRecordAge))}
	case s.maxRecordAge >= limit:
		return []string{fmt.Sprintf("MaxRecordAge %s is not less than Window %s less the clock-skew margin %s: Lambda could deliver a record as old as the business window, which the handler refuses as expired (its fact's record may be gone); give a MaxRecordAge below %s, or a longer Window",
			contract.Format(s.maxRecordAge), contract.Format(s.Runtime.Window), contract.Format(limits.ClockSkewMargin), contract.Format(limit))}
	}
	return nil
}

// retention is how long the stream keeps a record, as the construct can
// know it at synth: what names it in a message, and d, 0 when unknown;
// kinesis: the stream's retention can be made longer.
type retention struct {
	what    string
	d       time.Duration
	kinesis bool
}

// retention reads the source stream's retention: a DynamoDB stream's 24
// hours; a Kinesis stream of the app's own (Kinesis's 24 hours when it
// sets none); unknown for an imported stream or a token.
func (p *IdempotentStreamConsumerProps) retention() retention {
	if p.SourceTable != nil {
		return retention{what: fmt.Sprintf("the stream of %s, %s (a DynamoDB stream's)", *p.SourceTable.Node().Path(), contract.Format(limits.DynamoDBStreamRetention)), d: limits.DynamoDBStreamRetention}
	}
	if p.Stream == nil {
		return retention{}
	}
	cfn, ok := p.Stream.Node().DefaultChild().(awskinesis.CfnStream)
	if !ok {
		return retention{}
	}
	path := *p.Stream.Node().Path()
	switch h := cfn.RetentionPeriodHours(); {
	case h == nil:
		return retention{what: fmt.Sprintf("the stream %s, %s (Kinesis's default)", path, contract.Format(limits.KinesisDefaultRetention)), d: limits.KinesisDefaultRetention, kinesis: true}
	case *awscdk.Token_IsUnresolved(h):
		return retention{}
	default:
		d := time.Duration(*h * float64(time.Hour))
		return retention{what: fmt.Sprintf("the stream %s, %s", path, contract.Format(d)), d: d, kinesis: true}
	}
}

// retentionProblems: MaxRecordAge ends before the stream drops a record,
// so that Lambda gives up on a record that keeps failing (and sends its
// batch to the on-failure bucket) while the stream still holds it.
func retentionProblems(s *settings) []string {
	r := s.retention
	if r.d == 0 || s.maxRecordAge < r.d {
		return nil
	}
	longer := ""
	if r.kinesis {
		longer = fmt.Sprintf(", or the stream a longer retention (StreamProps.RetentionPeriod, up to %s)", contract.Format(limits.KinesisMaxRetention))
	}
	return []string{fmt.Sprintf("MaxRecordAge %s is not shorter than the retention of %s: a record that keeps failing leaves the stream before Lambda gives up on it, so its batch never reaches the on-failure bucket; give a MaxRecordAge below %s (default %s)%s",
		contract.Format(s.maxRecordAge), r.what, contract.Format(r.d), contract.Format(defaultMaxRecordAge), longer)}
}

// failureRetentionProblems: the failure bucket keeps a batch at least as
// long as the event source may retry its records (MaxRecordAge), in whole
// days (S3 lifecycle rules count days).
func failureRetentionProblems(s *settings) []string {
	const day = 24 * time.Hour
	if s.failureRetention < day || s.failureRetention%day != 0 || s.failureRetention < s.maxRecordAge {
		return []string{fmt.Sprintf("FailureRetention %s is not a whole number of days of at least 1 day and MaxRecordAge %s: S3 expires objects by days, and a batch must be kept at least as long as its records may be retried; give at least %s (default %s)",
			contract.Format(s.failureRetention), contract.Format(s.maxRecordAge), contract.Format(max(day, s.maxRecordAge.Round(day))), contract.Format(defaultFailureRetention))}
	}
	return nil
}

func iteratorAgeProblems(s *settings) []string {
	if s.iteratorAgeAlarm <= 0 {
		return []string{fmt.Sprintf("IteratorAgeAlarmThreshold %s is not positive; give the iterator age the consumer may lag by (default %s)", contract.Format(s.iteratorAgeAlarm), contract.Format(defaultIteratorAgeAlarm))}
	}
	return nil
}

// viewProblems checks the source table's stream: it must exist, and carry
// the images the consumer asks for.
func (s *settings) viewProblems(t awsdynamodb.ITable) []string {
	if t.TableStreamArn() == nil {
		return []string{fmt.Sprintf("SourceTable %s has no stream; enable one (TableProps.Stream: NEW_IMAGE, or NEW_AND_OLD_IMAGES with OldImage), or import the table with its TableStreamArn", *t.Node().Path())}
	}
	want := []string{"NEW_IMAGE", "NEW_AND_OLD_IMAGES"}
	why := "the function is handed each change's new image"
	if s.Runtime.StreamImages == contract.ImagesNewAndOld {
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

// viewTypeOf reads the stream view type of a table of the app (a Table,
// or a TableV2: a global table's stream, which DynamoDB keeps per replica
// and an MRSC table has only when asked for, is of one view type in every
// Region): "" when the table is imported, has none, or says it in a token.
func viewTypeOf(t awsdynamodb.ITable) string {
	var spec any
	switch cfn := t.Node().DefaultChild().(type) {
	case awsdynamodb.CfnTable:
		spec = cfn.StreamSpecification()
	case awsdynamodb.CfnGlobalTable:
		// Its StreamSpecification getter fails on the value TableV2 sets
		// (jsii: "Unable to serialize value as string"); the raw
		// properties hold it.
		spec = (*cfn.UpdatedProperties())["streamSpecification"]
	}
	if spec == nil {
		return ""
	}
	m, ok := awscdk.Stack_Of(t).Resolve(spec).(map[string]any)
	if !ok {
		return ""
	}
	v, _ := m["streamViewType"].(string)
	return v
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
