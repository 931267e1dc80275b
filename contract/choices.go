package contract

// Source says what feeds a consumer (SourceVar): which handler entry point
// runs under the contract, and which settings apply.
type Source string

// The sources.
const (
	// SourceQueue: an SQS queue, behind an SNS topic, an EventBridge rule,
	// an S3 bucket's notifications or fed by producers (IdempotentConsumer;
	// sqsbatch, eventbridge and s3event). The default.
	SourceQueue Source = "queue"
	// SourceKinesis: a Kinesis data stream (IdempotentStreamConsumer;
	// package kinesis).
	SourceKinesis Source = "kinesis"
	// SourceDynamoDBStreams: a DynamoDB table's stream
	// (IdempotentStreamConsumer; package dynamodbstream).
	SourceDynamoDBStreams Source = "dynamodb-streams"
	// SourceHTTP: HTTP requests through a Lambda function URL or an API
	// Gateway HTTP API route (IdempotentEndpoint; package endpoint).
	SourceHTTP Source = "http"
	// SourceStep: the Task state of a Step Functions state machine
	// (IdempotentStep; package step).
	SourceStep Source = "step"
)

// Delivery says what a queue's bodies are (DeliveryVar): SNS notifications
// in their envelope or raw, messages that producers send to the queue,
// EventBridge events, or S3 event notifications. The construct writes it
// from the consumer's source; the handler never guesses it from a body,
// but for Auto.
type Delivery string

// The deliveries.
const (
	// Auto detects an SNS envelope per message: a JSON object whose Type
	// is "Notification" and that has a TopicArn. Anything else is raw.
	Auto Delivery = "auto"
	// Raw means the body is the business message (raw message delivery,
	// or messages sent to the queue directly).
	Raw Delivery = "raw"
	// Envelope means every body is an SNS notification envelope whose
	// Message is the business message. The default.
	Envelope Delivery = "envelope"
	// EventBridge means every body is an EventBridge event as a rule
	// delivers it to an SQS target (the whole event, no input
	// transformer): the business message is its detail (package
	// eventbridge).
	EventBridge Delivery = "eventbridge"
	// S3 means every body is an S3 event notification: one fact per
	// record (package s3event).
	S3 Delivery = "s3"
)

// Removes says what a DynamoDB stream's consumer does with REMOVE records
// (StreamRemovesVar; the stream construct's Removes): a choice every such
// consumer makes, since a table's stream carries a REMOVE for each deleted
// item, TTL deletions too.
type Removes string

// The choices for REMOVE records.
const (
	// RemoveRun hands REMOVE records to the business function like any
	// other change: Change.Event is Remove, Change.New is nil, Change.Keys
	// holds the item's key and Change.Old its old image when the stream
	// carries one (view type OLD_IMAGE or NEW_AND_OLD_IMAGES).
	RemoveRun Removes = "run"
	// RemoveSkip acknowledges REMOVE records without running anything:
	// each is counted in the Skipped metric and logged at INFO, saying so.
	RemoveSkip Removes = "skip"
	// RemoveSkipExpired acknowledges the REMOVE records of Time to Live
	// expiries without running anything, each counted in the Skipped
	// metric and logged at INFO as a TTL expiry, and hands every other
	// REMOVE (a caller's delete) to the business function as RemoveRun
	// does. A TTL expiry is the record whose userIdentity is {type
	// "Service", principalId "dynamodb.amazonaws.com"}, as the DynamoDB
	// Streams API reference documents for items "deleted by the Time to
	// Live process after expiration" (Record.userIdentity:
	// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_streams_Record.html).
	RemoveSkipExpired Removes = "skip-expired"
)
