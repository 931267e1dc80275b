package consumer

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/bundle"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
)

// The construct computes, then checks, then builds (DESIGN.md, "Compute,
// check, build"):
//
//   - compute (this file) applies every default to the props, once, into
//     settings: the handler's runtime settings and the construct's own (the
//     queue's visibility timeout and redrive count, read from a given queue;
//     the removal policy, log retention and level; the props of each queue
//     it creates). It checks no rule: it reports only the props it cannot
//     read (tokens, fractions where whole numbers are needed).
//   - problems (validate.go, with byo.go and fifo.go) are pure rules over
//     the props and the settings: they return problems and never write.
//   - the builders (queues.go, function.go, alarms.go, dashboard.go) read
//     the settings alone, never the props.

// Defaults of the props that are the construct's own, as documented on
// IdempotentConsumerProps; the runtime settings' are package contract's.
const (
	defaultMaxReceiveCount  = 5
	defaultMemorySize       = 256
	defaultTimeout          = 30 * time.Second
	defaultOldestMessageAge = 15 * time.Minute
	defaultRemovalPolicy    = awscdk.RemovalPolicy_RETAIN
	defaultLogRetention     = awslogs.RetentionDays_ONE_MONTH
	defaultLogLevel         = awslambda.ApplicationLogLevel_INFO
	defaultTracing          = awslambda.Tracing_ACTIVE
	visibilityTimeoutFactor = 6
	maxVisibilityTimeout    = 12 * time.Hour
	// sqsDefaultVisibility is the visibility timeout of a queue that sets
	// none.
	sqsDefaultVisibility = 30 * time.Second
	// maxBatchingWindow is the SQS event source's longest batching window.
	maxBatchingWindow = 5 * time.Minute
	// maxReceiveBatch is the most messages one ReceiveMessage returns: 10,
	// the one home of the limit that the SQS event source's batch without
	// a batching window (maxBatchWithoutWindow), a FIFO queue's batch
	// (maxFIFOBatch) and the default BatchSize follow.
	maxReceiveBatch = 10
	// maxBatchWithoutWindow is the largest batch the SQS event source takes
	// without a batching window.
	maxBatchWithoutWindow = maxReceiveBatch
	// defaultBatchSize is the event source's default batch size.
	defaultBatchSize = maxReceiveBatch
	// maxBatchSize is the largest batch the SQS event source takes with a
	// batching window.
	maxBatchSize = 10_000
)

// tablePlaceholder stands for the table's name while the props are checked:
// the name is a token, known once the table exists.
const tablePlaceholder = "(the idempotency table)"

// dlqRetention is how long the construct's dead-letter queues keep a
// message by default: the SQS maximum, time for a human to look.
var dlqRetention = awscdk.Duration_Days(jsii.Number(14))

// settings are the props with their defaults applied, computed once by
// compute: everything the builders build from, and the rules check.
type settings struct {
	// id is the consumer's construct id.
	id string
	// runtime is written into the function's environment; its Table is
	// tablePlaceholder until the construct sets the table's name, and its
	// Consumer the id until the construct knows its path; its
	// MaxReceiveCount is maxReceiveCount (0 when unknown).
	runtime contract.Settings
	// entry is the directory of the handler's main package, and entryRoot
	// what a relative entry is resolved against ("": the module's root).
	// The builder resolves and bundles them: that reads the file system.
	entry, entryRoot string

	// The topic: given, or nil for one the construct creates (a FIFO topic
	// with fifo.topic, with contentBasedDeduplication).
	topic                     awssns.ITopic
	fifo                      fifo
	contentBasedDeduplication *bool
	filterPolicy              *map[string]awssns.SubscriptionFilter
	rawDelivery               bool
	// source is the consumer's one source (source.go): the topic above,
	// an EventBridge rule, an S3 bucket, or direct producers.
	source source

	// The queues: a given queue (nil: the construct creates one with
	// queueProps), the given dead-letter queue or the given queue's own
	// (nil: the construct creates one with dlqProps), and the props of the
	// subscription's dead-letter queue. queueProps lacks only the
	// dead-letter queue, a construct the builder creates.
	queue, dlq                     awssqs.IQueue
	queueProps, dlqProps, subProps *awssqs.QueueProps
	// eventDLQProps are the props of the EventBridge target's dead-letter
	// queue (a standard queue, even for a FIFO queue), with an EventBridge
	// source only; subProps are used with a topic only.
	eventDLQProps *awssqs.QueueProps
	// keyImported: EncryptionKey is given and not a key of the app, so
	// its policy cannot be changed (sourceWarnings).
	keyImported bool
	// visibilityTimeout is the queue's (the default 6 × Timeout, the
	// declared VisibilityTimeout, or what a given queue of the app says),
	// declaredVisibilityTimeout the VisibilityTimeout prop (0 when nil).
	visibilityTimeout, declaredVisibilityTimeout time.Duration
	// maxReceiveCount is the queue's redrive count (0 when unknown: an
	// imported queue without MaxReceiveCount), declaredMaxReceiveCount the
	// MaxReceiveCount prop or its default.
	maxReceiveCount, declaredMaxReceiveCount float64

	// The table: given (shared-table mode), or nil for one the construct
	// creates with removalPolicy.
	table         awsdynamodb.ITable
	removalPolicy awscdk.RemovalPolicy

	// The function.
	memorySize          float64
	reservedConcurrency *float64
	// architecture is the function's, and goarch the GOARCH its bootstrap
	// is built for ("" for an architecture the construct does not build).
	architecture   awslambda.Architecture
	goarch         string
	tracing        awslambda.Tracing
	logLevel       awslambda.ApplicationLogLevel
	logRetention   awslogs.RetentionDays
	role           awsiam.IRole // given; nil: the construct creates one
	vpc            awsec2.IVpc
	vpcSubnets     *awsec2.SubnetSelection
	securityGroups *[]awsec2.ISecurityGroup
	layers         *[]awslambda.ILayerVersion
	// environment is the user's own variables; the builder adds the
	// contract's (runtime.Encode) over them.
	environment map[string]*string
	hashKeys    bool

	// The event source.
	batchSize      int
	batchingWindow awscdk.Duration // nil: none
	maxConcurrency *float64

	// Alarms and dashboard.
	oldestMessageAge time.Duration
	alarmAction      awscloudwatch.IAlarmAction
	dashboard        bool

	// txTables are the tables TransactionalTables declares, in order,
	// without its nil entries (a problem of their own): the function
	// builder grants them and names them to the handler.
	txTables []awsdynamodb.ITable

	// What the rules of refusals.go judge, read once from the props and
	// the resources they name; the builders do not use them.
	//
	// topicMaxBytes is the MaximumMessageSize of a given topic of the app
	// (SNS's default when it sets none), when topicMaxKnown.
	topicMaxBytes float64
	topicMaxKnown bool
	// queueRetention and dlqRetention are the retention periods of the
	// queue and of its dead-letter queue (given, or the construct's).
	queueRetention, dlqRetention retention
	// queueSize is the given Queue's MaximumMessageSize (the zero value
	// without a given Queue, or for an imported one).
	queueSize queueSize
	// windowIsDefault: Window is nil, so the runtime's Window is the
	// default.
	windowIsDefault bool
	// layerInfos are what each given layer declares of its
	// architectures.
	layerInfos []layerInfo
	// tableTTL is the given Table's TTL (the zero value without one), and
	// tableKeys its key schema (not Known without one, or for an imported
	// table); the runtime's table design is computed from them
	// (computeDesign).
	tableTTL  tableTTL
	tableKeys table.Keys
}

// compute applies the defaults to the props of the consumer with the
// construct id name, without checking any rule: the settings as the
// construct would build them, and the props it could not read (tokens,
// fractions where whole numbers are needed, an Entry it cannot resolve).
func (p *IdempotentConsumerProps) compute(name string) (*settings, []string) {
	var rd propReader
	s := &settings{id: name, fifo: p.fifoKind()}
	s.rawDelivery = p.RawMessageDelivery != nil && *p.RawMessageDelivery
	s.source = p.computeSource(&rd)
	s.runtime = p.computeRuntime(name, s, &rd)
	s.entry, s.entryRoot = stringOr(p.Entry, ""), stringOr(p.EntryRoot, "")

	s.topic = p.Topic
	s.contentBasedDeduplication = p.ContentBasedDeduplication
	s.filterPolicy = p.FilterPolicy
	p.computeQueues(s, &rd)
	if isInt(s.maxReceiveCount) && s.maxReceiveCount > 0 {
		// The queue's redrive count, to the handler (0, left out: unknown).
		s.runtime.MaxReceiveCount = int(s.maxReceiveCount)
	}

	s.table = p.Table
	s.removalPolicy = p.RemovalPolicy
	if s.removalPolicy == "" {
		s.removalPolicy = defaultRemovalPolicy
	}
	p.computeFunction(s)

	s.batchingWindow = p.MaxBatchingWindow
	s.maxConcurrency = p.MaxConcurrency

	s.oldestMessageAge = rd.duration("OldestMessageAlarmThreshold", p.OldestMessageAlarmThreshold, defaultOldestMessageAge)
	s.alarmAction = p.AlarmAction
	s.dashboard = p.Dashboard != nil && *p.Dashboard
	if p.TransactionalTables != nil {
		for _, t := range *p.TransactionalTables {
			if t != nil {
				s.txTables = append(s.txTables, t)
			}
		}
	}
	p.computeReadings(s)
	return s, rd.problems
}

// computeReadings reads, from the props and the resources they name, what
// the rules of refusals.go judge: the topic's largest message, the queues'
// retention periods, a given queue's size, the layers' architectures and a
// given table's TTL. What the construct cannot read at synth (an imported
// queue, layer or table) is read as unknown, which the rules turn into a
// warning.
func (p *IdempotentConsumerProps) computeReadings(s *settings) {
	if p.Topic != nil {
		s.topicMaxBytes, s.topicMaxKnown = topicMaxMessageBytes(p.Topic)
	}
	s.queueRetention, s.dlqRetention = p.queueRetentions()
	if p.Queue != nil {
		s.queueSize = sizeOf(p.Queue)
	}
	s.windowIsDefault = p.Window == nil
	if p.Layers != nil {
		for _, layer := range *p.Layers {
			if layer != nil {
				s.layerInfos = append(s.layerInfos, layerInfoOf(layer))
			}
		}
	}
	if p.Table != nil {
		s.tableTTL = ttlOf(p.Table)
		s.tableKeys = table.KeysOf(p.Table)
	}
	p.computeDesign(s)
}

// computeDesign computes the runtime's table design (the settings
// TablePartitionKey to TableTTLAttribute): the construct's table's, or a
// given Table's as the app defines it (its key schema, its TTL attribute),
// else as the props declare it, else the construct's defaults; the sort
// key's fixed value defaults to the Namespace, or with the record key in
// the sort key to DefaultPartitionValuePrefix and the Namespace. Where the
// props and the table disagree, the table's wins here and the rule
// (designProblems) refuses the props.
func (p *IdempotentConsumerProps) computeDesign(s *settings) {
	if p.Table == nil {
		return // the construct's table: the contract's defaults; designProblems refuses the props
	}
	r := &s.runtime
	r.TablePartitionKey = stringOr(p.TablePartitionKey, r.TablePartitionKey)
	r.TableSortKey = stringOr(p.TableSortKey, r.TableSortKey)
	if k := s.tableKeys; k.Known {
		r.TablePartitionKey, r.TableSortKey = k.Partition, k.Sort
	}
	if p.TableKeyInSortKey != nil && *p.TableKeyInSortKey {
		r.TableRecordKeyIn = contract.KeyInSort
	}
	if r.TableSortKey != "" {
		def := r.Namespace
		if r.TableRecordKeyIn == contract.KeyInSort {
			def = DefaultPartitionValuePrefix + r.Namespace
		}
		r.TableFixedKeyValue = stringOr(p.TableFixedKeyValue, def)
	} else {
		r.TableFixedKeyValue = stringOr(p.TableFixedKeyValue, "")
	}
	r.TableTTLAttribute = stringOr(p.TableTTLAttribute, r.TableTTLAttribute)
	if t := s.tableTTL; t.known && t.enabled && t.attribute != "" && p.TableTTLAttribute == nil {
		r.TableTTLAttribute = t.attribute
	}
}

// computeRuntime computes the handler's runtime settings: the props that
// set them (runtime.go: every setting whose prop is its own, by one code
// path), the construct's defaults and the contract's, and the settings the
// construct sets itself (explicitSettings).
func (p *IdempotentConsumerProps) computeRuntime(name string, s *settings, rd *propReader) contract.Settings {
	s.batchSize = rd.count("BatchSize", p.BatchSize, defaultBatchSize)
	r := contract.Fill(func(f contract.Field) (any, bool) { return p.runtimeValue(f, s, rd) })
	r.Table = tablePlaceholder
	r.Namespace = defaultNamespace(name)
	if p.Namespace != nil {
		r.Namespace = *p.Namespace
	}
	r.Delivery = s.delivery()
	r.FIFO = s.fifo.queue
	r.Consumer = name
	return r
}

// computeFunction resolves the function's settings: its size, architecture,
// tracing, logs, role, network, layers and the user's environment.
func (p *IdempotentConsumerProps) computeFunction(s *settings) {
	s.memorySize = numberOr(p.MemorySize, defaultMemorySize)
	s.reservedConcurrency = p.ReservedConcurrentExecutions
	s.architecture = p.Architecture
	if s.architecture == nil {
		s.architecture = awslambda.Architecture_ARM_64()
	}
	s.goarch, _ = bundle.Goarch(*s.architecture.Name())
	s.tracing = p.Tracing
	if s.tracing == "" {
		s.tracing = defaultTracing
	}
	s.logLevel = p.LogLevel
	if s.logLevel == "" {
		s.logLevel = defaultLogLevel
	}
	s.logRetention = p.LogRetention
	if s.logRetention == "" {
		s.logRetention = defaultLogRetention
	}
	s.role, s.vpc, s.vpcSubnets, s.securityGroups, s.layers = p.Role, p.Vpc, p.VpcSubnets, p.SecurityGroups, p.Layers
	s.environment = map[string]*string{}
	if p.Environment != nil {
		for k, v := range *p.Environment {
			s.environment[k] = v
		}
	}
	s.hashKeys = p.HashKeys != nil && *p.HashKeys
}

// computeQueues resolves the queues: the given ones, the props of those the
// construct creates, and the queue's visibility timeout and redrive count,
// read from a given queue of the app (an imported queue says nothing: its
// declarations stand).
func (p *IdempotentConsumerProps) computeQueues(s *settings, rd *propReader) {
	s.declaredVisibilityTimeout = rd.duration("VisibilityTimeout", p.VisibilityTimeout, 0)
	s.declaredMaxReceiveCount = numberOr(p.MaxReceiveCount, defaultMaxReceiveCount)
	s.queue, s.dlq = p.Queue, p.DeadLetterQueue
	s.visibilityTimeout, s.maxReceiveCount = s.declaredVisibilityTimeout, s.declaredMaxReceiveCount
	key := p.EncryptionKey
	if key != nil {
		_, ofApp := key.Node().DefaultChild().(awskms.CfnKey)
		s.keyImported = !ofApp
	}
	switch q, ok := p.Queue.(awssqs.Queue); {
	case p.Queue == nil:
		if p.VisibilityTimeout == nil {
			s.visibilityTimeout = visibilityTimeoutFactor * s.runtime.Timeout
		}
		if s.dlq == nil {
			dlq := queueDefaults(key)
			dlq.RetentionPeriod = dlqRetention
			s.dlqProps = s.fixed(overlay(dlq, p.DeadLetterQueueProps))
		}
		s.queueProps = s.fixed(overlay(queueDefaults(key), p.QueueProps))
		s.queueProps.VisibilityTimeout = awscdk.Duration_Seconds(jsii.Number(s.visibilityTimeout.Seconds()))
	case ok && isDefinedInApp(q):
		if dlq := q.DeadLetterQueue(); dlq != nil {
			s.maxReceiveCount = *dlq.MaxReceiveCount
			if s.dlq == nil {
				s.dlq = dlq.Queue
			}
		}
		if v, token := appQueueVisibility(q); !token {
			s.visibilityTimeout = v
		}
	default: // imported: the declarations stand
		if p.MaxReceiveCount == nil {
			s.maxReceiveCount = 0 // unknown: the alarm says "MaxReceiveCount times"
		}
	}
	sub := queueDefaults(key)
	sub.RetentionPeriod = dlqRetention
	s.subProps = s.fixed(sub)
	if s.source.kind == sourceEventBus {
		if s.queueProps != nil && s.fifo.queue {
			// EventBridge sends a FIFO queue no deduplication id: the
			// queue derives one from the whole event, id included, which
			// absorbs EventBridge's own redelivery of one event and never
			// a producer's retry (a new id).
			s.queueProps.ContentBasedDeduplication = jsii.Bool(true)
		}
		// EventBridge's dead-letter queue is a standard queue, even for a
		// FIFO target (eb-rule-dlq).
		edlq := queueDefaults(key)
		edlq.RetentionPeriod = dlqRetention
		edlq.MaxMessageSizeBytes = jsii.Number(contract.MaxQueueBodyBytes)
		s.eventDLQProps = edlq
	}
}

// appQueueVisibility is the visibility timeout a queue of the app sets
// (SQS's default when it sets none), or token when it is a token.
func appQueueVisibility(q awssqs.Queue) (v time.Duration, token bool) {
	switch v := q.Node().DefaultChild().(awssqs.CfnQueue).VisibilityTimeout(); {
	case v == nil:
		return sqsDefaultVisibility, false
	case *awscdk.Token_IsUnresolved(v):
		return 0, true
	default:
		return time.Duration(*v) * time.Second, false
	}
}

// queueDefaults are the construct's secure defaults for a queue it creates:
// SSE-SQS or the customer's key, TLS only. The user's QueueProps (or
// DeadLetterQueueProps) are laid over them, field by field.
func queueDefaults(key awskms.IKey) *awssqs.QueueProps {
	p := &awssqs.QueueProps{EnforceSSL: jsii.Bool(true)}
	if key != nil {
		p.Encryption = awssqs.QueueEncryption_KMS
		p.EncryptionMasterKey = key
	} else {
		p.Encryption = awssqs.QueueEncryption_SQS_MANAGED
	}
	return p
}

// fixed sets what the construct decides for every queue it creates, after
// the user's overrides (which the rules keep from contradicting it): FIFO
// under a FIFO topic, and the largest SQS body, so that no queue refuses
// what the topic delivers (set even though it is SQS's default now: a queue
// created before keeps 256 KiB unless the template says otherwise).
//
// Under a FIFO topic all three queues are FIFO (SNS delivers a FIFO topic's
// subscription, and its dead letters, only into FIFO queues, and a FIFO
// queue's dead-letter queue must be FIFO), without content-based
// deduplication: SNS hands each message's deduplication id on to the queue,
// and a hash of the body would hash the SNS envelope, which is new on every
// delivery. CloudFormation names them with ".fifo".
func (s *settings) fixed(p *awssqs.QueueProps) *awssqs.QueueProps {
	if s.fifo.queue {
		p.Fifo = jsii.Bool(true)
	}
	p.MaxMessageSizeBytes = jsii.Number(contract.MaxQueueBodyBytes)
	return p
}

// propReader reads props that must be concrete numbers and durations,
// collecting the ones it cannot read.
type propReader struct{ problems []string }

// duration returns d, or def when d is nil or cannot be read.
func (rd *propReader) duration(name string, d awscdk.Duration, def time.Duration) time.Duration {
	if v, ok := rd.readDuration(name, d); ok {
		return v
	}
	return def
}

// readDuration returns d, and false when d is nil or cannot be read (a
// problem).
func (rd *propReader) readDuration(name string, d awscdk.Duration) (time.Duration, bool) {
	if d == nil {
		return 0, false
	}
	v, ok := concreteDuration(d)
	if !ok {
		rd.problems = append(rd.problems, fmt.Sprintf("%s is a token that CDK resolves only at deployment, but the construct needs its value to check it against the other settings and write it into the handler's environment; give a concrete duration such as awscdk.Duration_Seconds(jsii.Number(30))", name))
	}
	return v, ok
}

// count returns n as a whole number, or def when n is nil or cannot be
// read.
func (rd *propReader) count(name string, n *float64, def int) int {
	if v, ok := rd.readCount(name, n); ok {
		return v
	}
	return def
}

// readCount returns n as a whole number, and false when n is nil or cannot
// be read (a problem).
func (rd *propReader) readCount(name string, n *float64) (int, bool) {
	switch {
	case n == nil:
		return 0, false
	case *awscdk.Token_IsUnresolved(n):
		rd.problems = append(rd.problems, fmt.Sprintf("%s is a token that CDK resolves only at deployment, but the construct needs its value; give a number", name))
		return 0, false
	case !isInt(*n) || math.Abs(*n) > math.MaxInt32:
		rd.problems = append(rd.problems, fmt.Sprintf("%s %s is not a whole number in range; give a whole number", name, formatNumber(*n)))
		return 0, false
	}
	return int(*n), true
}

// concreteDuration converts a duration that is not a token to a
// time.Duration.
func concreteDuration(d awscdk.Duration) (time.Duration, bool) {
	if *d.IsUnresolved() {
		return 0, false
	}
	return time.Duration(*d.ToMilliseconds(nil)) * time.Millisecond, true
}

func numberOr(n *float64, def float64) float64 {
	if n == nil {
		return def
	}
	return *n
}

func stringOr(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}

// formatNumber writes f in plain decimal ("1048576", not "1.048576e+06").
func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func isInt(f float64) bool { return f == math.Trunc(f) && !math.IsInf(f, 0) }
