package contract

// Source says what feeds the consumer (Settings.Source): which handler entry
// point may run under the contract, and which of its settings apply.
type Source string

// The sources of the queue and stream constructs.
const (
	// SourceQueue: an SQS queue (behind an SNS topic, or fed directly): the
	// IdempotentConsumer construct's, and the default, so that an absent
	// variable (every template written before the setting existed) is a
	// queue consumer's.
	SourceQueue Source = "queue"
	// SourceKinesis: a Kinesis data stream (the stream construct's).
	SourceKinesis Source = "kinesis"
	// SourceDynamoDBStreams: a DynamoDB table's stream (the stream
	// construct's).
	SourceDynamoDBStreams Source = "dynamodb-streams"
)

// SourceVar is the variable of the source.
const SourceVar = "CONSUMER_SOURCE"

// quietDefault marks an entry that Encode writes only when it is not the
// default, so that the templates of consumers that do not use it (every
// queue consumer, for the source) stay as they were. Its default depends on
// no other setting.
func quietDefault(f Field) Field {
	f.omitDefault = true
	return f
}
