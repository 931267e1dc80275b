// Package stream provides IdempotentStreamConsumer, an AWS CDK construct for
// an idempotent Kinesis Data Streams or DynamoDB Streams → Lambda consumer
// written in Go: the stream member of the family of package
// constructs/consumer, on the same building blocks (the idempotency table
// and its namespace claim, the function, its role and log group, the
// bundled bootstrap, the runtime contract, the alarms and dashboard).
//
// On a stream, replays are guaranteed: after a failure Lambda resumes the
// shard from the reported checkpoint, delivering every later record again.
// The handler (streambatch.StartKinesis, streambatch.StartDynamoDB) absorbs
// them through the guard. The event source reports batch item failures,
// bisects a failing batch, retries it a bounded number of times and sends
// what it gives up on, whole (Lambda writes the invocation record with its
// payload to an S3 destination), to an S3 bucket the construct creates: a
// replay of those objects through the same handler is harmless, since every
// record whose fact completed is a duplicate (DESIGN.md, "Streams").
package stream

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskinesis"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/family"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/function"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/monitor"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/nag"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// IdempotentStreamConsumer is an idempotent consumer of a Kinesis stream or
// of a DynamoDB table's stream. It is an awsiam.IGrantable: its principal
// is the function's role.
type IdempotentStreamConsumer interface {
	constructs.Construct
	awsiam.IGrantable

	// Stream is the Kinesis stream consumed; nil for a table's stream.
	Stream() awskinesis.IStream
	// SourceTable is the table whose stream is consumed; nil for Kinesis.
	SourceTable() awsdynamodb.ITable
	// FailureBucket keeps the batches the event source gave up on.
	FailureBucket() awss3.Bucket
	// Table holds the idempotency records.
	Table() awsdynamodb.ITable
	// Namespace is the key prefix of the consumer's records.
	Namespace() *string
	// Function is the handler.
	Function() awslambda.Function
	// Role is the function's execution role.
	Role() awsiam.IRole
	// LogGroup is the function's log group.
	LogGroup() awslogs.LogGroup
	// Alarms are the construct's alarms.
	Alarms() Alarms
	// Dashboard is the consumer's dashboard with Dashboard; nil otherwise.
	Dashboard() awscloudwatch.Dashboard
	// Widgets are the dashboard's widgets, row by row.
	Widgets() [][]awscloudwatch.IWidget

	// MetricOutcome is the number of records that ended with outcome
	// (sum), in the handler's metrics. It panics for a value that is not an
	// outcome.
	MetricOutcome(outcome outcome.Outcome, props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricSkipped is the number of REMOVE records acknowledged without
	// running (Removes skip, or skip-expired for TTL expiries; sum).
	MetricSkipped(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricIteratorAge is how far behind its stream the consumer is: the
	// age of the last record of each batch when it was read (Lambda's
	// IteratorAge, milliseconds, maximum).
	MetricIteratorAge(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricFailedBatches is the number of objects written to the failure
	// bucket (S3 request metrics' PutRequests, sum): batches the event
	// source gave up on.
	MetricFailedBatches(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
	// MetricErrors is the number of failed invocations (sum).
	MetricErrors(props *awscloudwatch.MetricOptions) awscloudwatch.Metric
}

// Alarms are the alarms of an IdempotentStreamConsumer; each fires on the
// first datapoint that breaches and treats missing data as not breaching.
type Alarms struct {
	// IteratorAge fires when the consumer is IteratorAgeAlarmThreshold
	// behind its stream: a failing record blocks its shard (retries, then
	// the failure bucket), or the consumer does not keep up.
	IteratorAge awscloudwatch.Alarm
	// Failure fires when the event source wrote a batch to the failure
	// bucket: its records were not all processed (replay it through the
	// handler once the cause is fixed).
	Failure awscloudwatch.Alarm
	// Errors fires when an invocation failed as a whole.
	Errors awscloudwatch.Alarm
	// Throttles fires when an invocation was throttled.
	Throttles awscloudwatch.Alarm
	// PayloadMismatch, LeaseLost, BadInput and Expired fire on those
	// outcomes, as the queue consumer's do.
	PayloadMismatch, LeaseLost, BadInput, Expired awscloudwatch.Alarm
}

// All returns every alarm, in a fixed order.
func (a Alarms) All() []awscloudwatch.Alarm {
	return []awscloudwatch.Alarm{a.IteratorAge, a.Failure, a.Errors, a.Throttles, a.PayloadMismatch, a.LeaseLost, a.BadInput, a.Expired}
}

type streamConsumer struct {
	constructs.Construct
	stream      awskinesis.IStream
	sourceTable awsdynamodb.ITable
	bucket      awss3.Bucket
	table       awsdynamodb.ITable
	namespace   string
	fn          function.Function
	alarms      Alarms
	dashboard   awscloudwatch.Dashboard
	s           *settings
}

// NewIdempotentStreamConsumer creates the consumer in scope. It panics, as
// CDK constructs do, when the props are invalid (every problem, with the
// value given and the fix), or when the handler does not build.
func NewIdempotentStreamConsumer(scope constructs.Construct, id *string, props *IdempotentStreamConsumerProps) IdempotentStreamConsumer {
	if props == nil {
		props = &IdempotentStreamConsumerProps{}
	}
	s, err := props.resolve(*id)
	if err != nil {
		panic(err)
	}
	assetDir := s.Bundle()
	c := &streamConsumer{stream: props.Stream, sourceTable: props.SourceTable, namespace: s.Runtime.Namespace, s: s}
	constructs.NewConstruct_Override(c, scope, id)
	s.Runtime.Consumer = *c.Node().Path()
	c.table = s.NewTable(c)
	c.fn = s.NewFunction(c, assetDir, c.table)
	family.Warn(c, s.Warnings())
	c.addBucket(s)
	c.addEventSource(s)
	s.SuppressWildcards(c.fn)
	c.addAlarms(s)
	if s.Dashboard {
		c.addDashboard()
	}
	return c
}

// addBucket creates the on-failure bucket: encrypted, private, TLS only,
// versioned, with server access logs and request metrics (the failure
// alarm's).
func (c *streamConsumer) addBucket(s *settings) {
	logs := awss3.NewBucket(c, jsii.String(ids.FailureAccessLogs), &awss3.BucketProps{
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		EnforceSSL:        jsii.Bool(true),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_PREFERRED,
		RemovalPolicy:     s.Removal,
	})
	// cdk-nag asks no access logs of the access-log bucket itself (AwsSolutions-S1).
	days := awscdk.Duration_Days(jsii.Number(s.failureRetention.Hours() / 24))
	c.bucket = awss3.NewBucket(c, jsii.String(ids.FailureBucket), &awss3.BucketProps{
		Encryption:             awss3.BucketEncryption_S3_MANAGED,
		BlockPublicAccess:      awss3.BlockPublicAccess_BLOCK_ALL(),
		EnforceSSL:             jsii.Bool(true),
		Versioned:              jsii.Bool(true),
		ServerAccessLogsBucket: logs,
		Metrics:                &[]*awss3.BucketMetrics{{Id: jsii.String(ids.FailureMetricsFilter)}},
		RemovalPolicy:          s.Removal,
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Id:                          jsii.String("ExpireFailedBatches"),
			Expiration:                  days,
			NoncurrentVersionExpiration: days,
		}},
	})
}

// addEventSource connects the stream to the function: report batch item
// failures, bisect, bounded retries and record age, the failure bucket.
//
// The on-failure destination is set on the mapping itself, with only what
// Lambda documents that it needs of an S3 destination (s3:PutObject and
// s3:ListBucket, https://docs.aws.amazon.com/lambda/latest/dg/kinesis-on-failure-destination.html):
// aws-cdk-lib's S3OnFailureDestination grants the function read and write,
// delete included, on the bucket that keeps what it failed.
func (c *streamConsumer) addEventSource(s *settings) {
	var window awscdk.Duration
	if s.batchingWindow > 0 {
		window = awscdk.Duration_Millis(jsii.Number(float64(s.batchingWindow.Milliseconds())))
	}
	age := awscdk.Duration_Seconds(jsii.Number(s.maxRecordAge.Seconds()))
	if c.stream != nil {
		c.fn.Function.AddEventSource(awslambdaeventsources.NewKinesisEventSource(c.stream, &awslambdaeventsources.KinesisEventSourceProps{
			StartingPosition: s.startingPosition, BatchSize: jsii.Number(s.batchSize), MaxBatchingWindow: window,
			BisectBatchOnError: jsii.Bool(s.bisect), RetryAttempts: jsii.Number(s.retryAttempts), MaxRecordAge: age,
			ParallelizationFactor: jsii.Number(s.parallelizationFactor), ReportBatchItemFailures: jsii.Bool(true),
		}))
	} else {
		c.fn.Function.AddEventSource(awslambdaeventsources.NewDynamoEventSource(c.sourceTable, &awslambdaeventsources.DynamoEventSourceProps{
			StartingPosition: s.startingPosition, BatchSize: jsii.Number(s.batchSize), MaxBatchingWindow: window,
			BisectBatchOnError: jsii.Bool(s.bisect), RetryAttempts: jsii.Number(s.retryAttempts), MaxRecordAge: age,
			ParallelizationFactor: jsii.Number(s.parallelizationFactor), ReportBatchItemFailures: jsii.Bool(true),
		}))
	}
	for _, child := range *c.fn.Function.Node().Children() {
		if esm, ok := child.(awslambda.EventSourceMapping); ok {
			esm.Node().DefaultChild().(awslambda.CfnEventSourceMapping).SetDestinationConfig(&awslambda.CfnEventSourceMapping_DestinationConfigProperty{
				OnFailure: &awslambda.CfnEventSourceMapping_OnFailureProperty{Destination: c.bucket.BucketArn()},
			})
		}
	}
	c.fn.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("s3:ListBucket"), Resources: &[]*string{c.bucket.BucketArn()},
	}))
	c.fn.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("s3:PutObject"), Resources: &[]*string{c.bucket.ArnForObjects(jsii.String("*"))},
	}))
	nag.Suppress(c.fn.Role, true, nag.Rule{
		ID:        "AwsSolutions-IAM5",
		Reason:    "The on-failure destination: Lambda writes each failed batch as an object whose key it chooses (the shard and the time), so s3:PutObject is on every object of the failure bucket, and on that bucket alone.",
		AppliesTo: []string{"Resource::<" + *awscdk.Stack_Of(c).GetLogicalId(c.bucket.Node().DefaultChild().(awss3.CfnBucket)) + ".Arn>/*"},
	})
}

func (c *streamConsumer) handler() monitor.Handler {
	return monitor.Handler{Namespace: c.s.Runtime.MetricsNamespace, Consumer: *c.Node().Path(), Function: c.fn.Function, Timeout: c.s.Runtime.Timeout}
}

func (c *streamConsumer) addAlarms(s *settings) {
	id := s.ID
	alarm := func(alarmID, description string, metric awscloudwatch.IMetric, threshold float64) awscloudwatch.Alarm {
		return monitor.NewAlarm(c, alarmID, description, metric, threshold, s.AlarmAction)
	}
	c.alarms = Alarms{
		IteratorAge: alarm(ids.IteratorAgeAlarm,
			fmt.Sprintf("%s: the consumer is more than %s behind its stream: a failing record blocks its shard (it is retried, then sent to the failure bucket), or the consumer does not keep up.", id, contract.Format(s.iteratorAgeAlarm)),
			c.MetricIteratorAge(nil), float64(s.iteratorAgeAlarm.Milliseconds())),
		Failure: alarm(ids.FailureAlarm,
			fmt.Sprintf("%s: the event source gave up on a batch (retries or record age exhausted) and wrote it, with its records, to the failure bucket. Fix the cause, then replay the object through the handler: the records whose facts completed are duplicates.", id),
			c.MetricFailedBatches(nil), 0),
		Errors:    alarm(ids.ErrorsAlarm, fmt.Sprintf("%s: invocations failed as a whole (records reported as batch item failures are not errors).", id), c.MetricErrors(nil), 0),
		Throttles: alarm(ids.ThrottlesAlarm, fmt.Sprintf("%s: invocations were throttled.", id), c.handler().Throttles(nil), 0),
		PayloadMismatch: alarm(ids.PayloadMismatchAlarm,
			fmt.Sprintf("%s: a fact's key arrived with another payload than the one recorded; the record is retried, then sent to the failure bucket. The key function gives two facts one key.", id),
			c.MetricOutcome(outcome.Mismatch, nil), 0),
		LeaseLost: alarm(ids.LeaseLostAlarm,
			fmt.Sprintf("%s: an effect outlived its lease and another worker took the fact over, so the effect may have run twice. Raise Timeout, or make the effect faster.", id),
			c.MetricOutcome(outcome.LeaseLost, nil), 0),
		BadInput: alarm(ids.BadInputAlarm,
			fmt.Sprintf("%s: the handler refused records no retry can fix (not JSON, a KPL aggregate, no key); they block their key's later records until the event source sends the batch to the failure bucket.", id),
			c.MetricOutcome(outcome.BadInput, nil), 0),
		Expired: alarm(ids.ExpiredAlarm,
			fmt.Sprintf("%s: the handler refused records as old as the business window: their facts' records may be gone, so their effects did not run. A replay of an old failure-bucket object does this; settle such records by hand.", id),
			c.MetricOutcome(outcome.Expired, nil), 0),
	}
}

func (c *streamConsumer) addDashboard() {
	var rows []*[]awscloudwatch.IWidget
	for _, row := range c.Widgets() {
		rows = append(rows, &row)
	}
	c.dashboard = awscloudwatch.NewDashboard(c, jsii.String(ids.Dashboard), &awscloudwatch.DashboardProps{Widgets: &rows})
}

// Widgets returns the consumer's dashboard, row by row.
func (c *streamConsumer) Widgets() [][]awscloudwatch.IWidget {
	h := c.handler()
	return [][]awscloudwatch.IWidget{
		h.OutcomeRow(),
		{
			h.RetriedGraph(),
			monitor.Graph("Stream", 12, monitor.Metrics(
				c.MetricIteratorAge(&awscloudwatch.MetricOptions{Label: jsii.String("Iterator age (ms)")}),
				c.MetricFailedBatches(&awscloudwatch.MetricOptions{Label: jsii.String("Batches in the failure bucket")}),
				c.MetricSkipped(&awscloudwatch.MetricOptions{Label: jsii.String("REMOVE records skipped")}))),
		},
		h.FunctionGraphs(),
	}
}

func (c *streamConsumer) Stream() awskinesis.IStream         { return c.stream }
func (c *streamConsumer) SourceTable() awsdynamodb.ITable    { return c.sourceTable }
func (c *streamConsumer) FailureBucket() awss3.Bucket        { return c.bucket }
func (c *streamConsumer) Table() awsdynamodb.ITable          { return c.table }
func (c *streamConsumer) Namespace() *string                 { return jsii.String(c.namespace) }
func (c *streamConsumer) Function() awslambda.Function       { return c.fn.Function }
func (c *streamConsumer) Role() awsiam.IRole                 { return c.fn.Role }
func (c *streamConsumer) LogGroup() awslogs.LogGroup         { return c.fn.LogGroup }
func (c *streamConsumer) Alarms() Alarms                     { return c.alarms }
func (c *streamConsumer) Dashboard() awscloudwatch.Dashboard { return c.dashboard }
func (c *streamConsumer) GrantPrincipal() awsiam.IPrincipal  { return c.fn.Role.GrantPrincipal() }

func (c *streamConsumer) MetricOutcome(outcome outcome.Outcome, props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	m := c.handler().Outcome(outcome, props)
	if m == nil {
		panic(fmt.Sprintf("IdempotentStreamConsumer %s: MetricOutcome(%d): not an outcome; give one of outcome.Outcomes()", *c.Node().Path(), int(outcome)))
	}
	return m
}

func (c *streamConsumer) MetricSkipped(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.handler().Count(outcome.MetricSkipped, props)
}

func (c *streamConsumer) MetricIteratorAge(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.fn.Function.Metric(jsii.String("IteratorAge"), monitor.WithStatistic(props, "Maximum"))
}

func (c *streamConsumer) MetricFailedBatches(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace:  jsii.String("AWS/S3"),
		MetricName: jsii.String("PutRequests"),
		DimensionsMap: &map[string]*string{
			"BucketName": c.bucket.BucketName(),
			"FilterId":   jsii.String(ids.FailureMetricsFilter),
		},
		Period: awscdk.Duration_Minutes(jsii.Number(1)),
	}).With(monitor.WithStatistic(props, "Sum"))
}

func (c *streamConsumer) MetricErrors(props *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return c.handler().Errors(props)
}
