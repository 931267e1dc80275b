package stream

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskinesis"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/contract"
)

// Defaults of the props, in one place (each prop's doc states its value). Lambda's own defaults for a stream
// event source retry a failing record until it leaves the stream (retry
// attempts and record age -1, unlimited), which blocks its shard for the
// stream's whole retention: the construct's are finite, and a record they
// give up on is kept in the on-failure bucket, with the batch it came in.
const (
	// defaultBatchSize is Lambda's default for streams.
	defaultBatchSize = 100
	// defaultRetryAttempts: a failing batch is retried (from its checkpoint,
	// bisected on each function error) 10 times, then sent to the
	// on-failure bucket. Bisections do not count as retries.
	defaultRetryAttempts = 10
	// defaultMaxRecordAge: a record older than 6 hours goes to the
	// on-failure bucket without being run: well within a DynamoDB stream's
	// 24 hours and the default business window (24 h), so that no record
	// Lambda delivers is as old as the window (see MaxRecordAge).
	defaultMaxRecordAge = 6 * time.Hour
	// defaultFailureRetention is how long the on-failure bucket keeps a
	// batch the event source gave up on (its current and its noncurrent
	// versions): two weeks to look and replay, as a queue consumer's
	// dead-letter queue keeps a message; at least MaxRecordAge's longest,
	// 7 days, so that it outlasts any retry period the construct allows.
	defaultFailureRetention = 14 * 24 * time.Hour
	// defaultParallelizationFactor: one batch per shard at a time.
	defaultParallelizationFactor = 1
	// defaultIteratorAgeAlarm is the iterator age past which the iterator
	// age alarm fires: the consumer is 5 minutes behind its stream.
	defaultIteratorAgeAlarm = 5 * time.Minute
)

// IdempotentStreamConsumerProps configure an IdempotentStreamConsumer.
// Every optional prop documents its default as behaviour.
type IdempotentStreamConsumerProps struct {
	// Props are the settings every construct of the family shares: Entry
	// (its main calls kinesis.Start or dynamodbstream.Start,
	// or their Tx forms with TransactionalTables), the table and its
	// design, Namespace, Window, the function, its logs and alarms. The
	// RemovalPolicy applies to the on-failure bucket too.
	core.Props

	// Stream is the Kinesis data stream consumed. Exactly one of Stream and
	// SourceTable.
	Stream awskinesis.IStream
	// SourceTable is the DynamoDB table whose stream is consumed (the
	// outbox): it must have a stream (TableProps.Stream), whose view type
	// carries the images asked for: NEW_IMAGE or NEW_AND_OLD_IMAGES, and
	// NEW_AND_OLD_IMAGES with OldImage. Exactly one of Stream and
	// SourceTable.
	SourceTable awsdynamodb.ITable
	// OldImage hands the function the old image of a MODIFY too
	// (dynamodbstream.Change.Old). DynamoDB streams only. Default: false.
	OldImage *bool
	// Removes says what the handler does with REMOVE records: RemoveRun
	// (hand them all to the function), RemoveSkipExpired (acknowledge the
	// REMOVE records of Time to Live expiries, counted as Skipped and
	// logged as TTL expiries, and hand a caller's deletes to the function)
	// or RemoveSkip (acknowledge them all, counted as Skipped). Required
	// with SourceTable; not with Stream.
	Removes contract.Removes

	// StartingPosition is where a new event source starts reading. Default:
	// TRIM_HORIZON, the oldest record the stream holds, so that nothing
	// written before the consumer existed is missed (the guard absorbs
	// records an earlier consumer of the namespace handled). AT_TIMESTAMP is
	// not offered.
	StartingPosition awslambda.StartingPosition
	// BatchSize is the most records per batch: 1 to 10,000. Default: 100
	// (Lambda's for streams).
	BatchSize *float64
	// MaxBatchingWindow is how long Lambda gathers records before it
	// invokes: at most 5 minutes. Default: none (Lambda invokes as records
	// come).
	MaxBatchingWindow awscdk.Duration
	// BisectBatchOnError splits a batch in two on a function error (an
	// invocation that failed as a whole), to isolate what fails it.
	// Default: true.
	BisectBatchOnError *bool
	// RetryAttempts is how often a failing batch is retried before its
	// records go to the on-failure bucket: 0 to 10,000 (unlimited retries,
	// Lambda's -1, are refused: they block the shard until the records
	// leave the stream). Default: 10.
	RetryAttempts *float64
	// MaxRecordAge is the age past which Lambda sends a record to the
	// on-failure bucket without invoking: 60 seconds to 7 days, less than
	// Window by the clock-skew margin, so that every record the function is
	// given is younger than the business window (an older one would be
	// refused as expired: its fact's record may be gone), and less than the
	// stream's retention (a DynamoDB stream's 24 hours, a Kinesis stream's
	// own), so that the stream still holds a record Lambda gives up on.
	// Default: 6 hours.
	MaxRecordAge awscdk.Duration
	// ParallelizationFactor is how many batches of one shard run at once:
	// 1 to 10 (Lambda keeps the order of each partition key, or item key,
	// across them). Default: 1. Tumbling windows are not offered: their
	// state is not the guard's.
	ParallelizationFactor *float64

	// BatchConcurrency bounds how many records of a batch run at once
	// (records of one key run in order whatever it is). Default: the batch
	// size, at most 32.
	BatchConcurrency *float64
	// CacheSize is how many completed keys the handler keeps in memory.
	// Default: 0 (none).
	CacheSize *float64
	// PayloadIgnore lists JSON fields left out of the payload hash; for a
	// DynamoDB stream, under "new." and "old." ("new.updatedAt"). Default:
	// none.
	PayloadIgnore *[]*string
	// FailureRetention is how long the on-failure bucket keeps each batch
	// (a lifecycle rule expires the objects, and their noncurrent
	// versions, after it): whole days, at least MaxRecordAge. Default: 14
	// days.
	FailureRetention awscdk.Duration
	// IteratorAgeAlarmThreshold is the iterator age past which the iterator
	// age alarm fires. Default: 5 minutes.
	IteratorAgeAlarmThreshold awscdk.Duration
}
