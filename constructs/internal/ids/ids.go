// Package ids holds the construct ids of everything the constructs of the
// family create, relative to the construct (or, where said, to the stack or
// the app), in one place. A construct id is part of a resource's logical id:
// renaming one replaces the resource in every deployed stack (the table with
// its records), so each is pinned by this package's test. Users reach the
// resources through the constructs' accessors (Table(), Queue(),
// Alarms(), ...), never by id.
package ids

// What every construct of the family creates.
const (
	// Table is the table the construct creates when none is given.
	Table = "Table"
	// LogGroup is the function's log group.
	LogGroup = "LogGroup"
	// Role is the function's execution role (unless Role is given).
	Role = "Role"
	// Function is the function of a queue consumer, a stream consumer and
	// a step (an endpoint's is EndpointFunction).
	Function = "Function"
	// KeySecret is the secret under which keys are hashed (HashKeys).
	KeySecret = "KeySecret"
	// ErrorsAlarm is the alarm on the function's errors.
	ErrorsAlarm = "ErrorsAlarm"
	// ThrottlesAlarm is the alarm on the function's throttles.
	ThrottlesAlarm = "ThrottlesAlarm"
	// PayloadMismatchAlarm is the alarm on payload mismatches (the
	// consumers' and the step's).
	PayloadMismatchAlarm = "PayloadMismatchAlarm"
	// LeaseLostAlarm is the alarm on lost leases (the consumers' and the
	// step's).
	LeaseLostAlarm = "LeaseLostAlarm"
	// BadInputAlarm is the alarm on bad input (the consumers' and the
	// step's).
	BadInputAlarm = "BadInputAlarm"
	// ExpiredAlarm is the alarm on records as old as the window (the
	// consumers').
	ExpiredAlarm = "ExpiredAlarm"
	// Dashboard is the construct's dashboard (Dashboard).
	Dashboard = "Dashboard"
)

// What GlobalTable adds (DESIGN.md, "Two Regions").
const (
	// GlobalTable is the global table the construct creates (in the first
	// Region) or imports (in the others) with GlobalTable: another id than
	// Table, so that turning GlobalTable on creates a new, empty table
	// (MRSC is enabled on empty tables only) and never replaces the records
	// of the one-Region table.
	GlobalTable = "GlobalTable"
	// Sweepers is the construct, a child of the app, that holds which
	// tables have a sweeper in the app: one per table. It synthesizes
	// nothing.
	Sweepers = "IdempotencySweepers"
	// SweeperPrefix starts the id of the sweeper of an MRSC table, a child
	// of the stack of the table's first Region, followed by a hash of the
	// table's name (table.Key), so that it does not move when consumers
	// are added or reordered.
	SweeperPrefix = "IdempotencySweeper"
	// The sweeper's own resources, children of the sweeper.
	SweeperFunction    = "Function"
	SweeperLogGroup    = "LogGroup"
	SweeperRole        = "Role"
	SweeperSchedule    = "Schedule"
	SweeperErrorsAlarm = "ErrorsAlarm"
)

// What an IdempotentConsumer adds.
const (
	// Topic is the topic the consumer creates when none is given.
	Topic = "Topic"
	// TopicKey is the imported alias/aws/sns key of that topic.
	TopicKey = "TopicKey"
	// Queue is the queue the function consumes.
	Queue = "Queue"
	// DeadLetterQueue is the queue's dead-letter queue.
	DeadLetterQueue = "DeadLetterQueue"
	// SubscriptionDeadLetterQueue is the subscription's dead-letter queue.
	SubscriptionDeadLetterQueue = "SubscriptionDeadLetterQueue"
	// DeadLetterQueueAlarm is the alarm on the dead-letter queue.
	DeadLetterQueueAlarm = "DeadLetterQueueAlarm"
	// SubscriptionDLQAlarm is the alarm on the subscription dead-letter
	// queue.
	SubscriptionDLQAlarm = "SubscriptionDeadLetterQueueAlarm"
	// OldestMessageAlarm is the alarm on the age of the oldest message.
	OldestMessageAlarm = "OldestMessageAlarm"
	// DeadLetteredUnstartedAlarm is the alarm on records dead-lettered
	// without having started (outcome.MetricDeadLetteredUnstarted).
	DeadLetteredUnstartedAlarm = "DeadLetteredUnstartedAlarm"

	// Rule is the EventBridge rule whose target is the queue.
	Rule = "Rule"
	// EventDeadLetterQueue is the rule target's dead-letter queue.
	EventDeadLetterQueue = "EventDeadLetterQueue"
	// EventFailedInvocationsAlarm is the alarm on the rule's
	// FailedInvocations.
	EventFailedInvocationsAlarm = "EventFailedInvocationsAlarm"
	// EventSentToDeadLetterQueueAlarm is the alarm on the rule's
	// InvocationsSentToDlq.
	EventSentToDeadLetterQueueAlarm = "EventSentToDeadLetterQueueAlarm"
	// EventFailedToDeadLetterQueueAlarm is the alarm on the rule's
	// InvocationsFailedToBeSentToDlq.
	EventFailedToDeadLetterQueueAlarm = "EventFailedToDeadLetterQueueAlarm"
	// EventDeadLetterQueueAlarm is the alarm on the depth of the rule
	// target's dead-letter queue.
	EventDeadLetterQueueAlarm = "EventDeadLetterQueueAlarm"

	// BucketNotifications is the construct, a child of the app, that holds
	// the bucket notifications of the app's consumers, so that two
	// consumers of one bucket whose filters overlap are refused at synth
	// (S3 refuses them at deployment). It synthesizes nothing.
	BucketNotifications = "IdempotentConsumerBucketNotifications"
	// NotificationsHandlerLogs is the log group of CDK's
	// bucket-notifications handler, a child of the stack (one per stack, as
	// the handler is).
	NotificationsHandlerLogs = "BucketNotificationsHandlerLogs"
)

// What an IdempotentEndpoint adds.
const (
	// EndpointFunction is the endpoint's function.
	EndpointFunction = "Handler"
	// FunctionURL is the function's URL (without Route).
	FunctionURL = "Url"
	// HTTPAPI is the HTTP API (with Route).
	HTTPAPI = "Api"
	// Stage is the HTTP API's stage.
	Stage = "Stage"
	// AccessLogs is the stage's access-log group.
	AccessLogs = "AccessLogs"
	// JwtAuthorizer is the HTTP API's JWT authorizer (JwtIssuer), a child
	// of the HTTP API.
	JwtAuthorizer = "JwtAuthorizer"
	// ServerErrorsAlarm is the alarm on the endpoint's 5xx answers.
	ServerErrorsAlarm = "ServerErrorsAlarm"
	// SignatureAlarm is the alarm on a webhook's signature failures.
	SignatureAlarm = "SignatureFailuresAlarm"
	// InProgressAlarm is the alarm on 409 (in progress) answers.
	InProgressAlarm = "InProgressAlarm"
)

// What an IdempotentStreamConsumer adds.
const (
	// FailureBucket keeps the batches the event source gave up on.
	FailureBucket = "FailureBucket"
	// FailureAccessLogs is the failure bucket's access-log bucket.
	FailureAccessLogs = "FailureAccessLogs"
	// IteratorAgeAlarm is the alarm on the iterator age.
	IteratorAgeAlarm = "IteratorAgeAlarm"
	// FailureAlarm is the alarm on batches written to the failure bucket.
	FailureAlarm = "FailureAlarm"
	// FailureMetricsFilter is the id of the failure bucket's request
	// metrics configuration (the whole bucket), whose PutRequests the
	// failure alarm watches: each object is a batch Lambda gave up on.
	FailureMetricsFilter = "OnFailure"
)

// What an IdempotentStep adds.
const (
	// OutputNotStoredAlarm is the alarm on Step.OutputNotStored.
	OutputNotStoredAlarm = "OutputNotStoredAlarm"
	// StoreFailedAlarm is the alarm on Step.StoreFailed.
	StoreFailedAlarm = "StoreFailedAlarm"
)
