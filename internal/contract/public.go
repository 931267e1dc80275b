package contract

import pub "github.com/idempotent-consumer/idempotent-consumer/contract"

// The names and values of the public package contract, under the names
// that this package's callers use: the values live there, once, so that a
// user's module names them (contract.TableVar, contract.RemoveSkip) and the
// construct and the handler write and read the same.

// Version is the version of the contract that this library writes and
// reads (pub.Version).
const Version = pub.Version

// Names of the environment variables (package contract's, pub). Only
// Encode and Decode read or write them; Fields lists them with the setting
// each carries.
const (
	VersionVar          = pub.VersionVar
	TableVar            = pub.TableVar
	PartitionKeyVar     = pub.PartitionKeyVar
	SortKeyVar          = pub.SortKeyVar
	RecordKeyInVar      = pub.RecordKeyInVar
	FixedKeyValueVar    = pub.FixedKeyValueVar
	TTLAttributeVar     = pub.TTLAttributeVar
	NamespaceVar        = pub.NamespaceVar
	WindowVar           = pub.WindowVar
	TTLAfterWindowVar   = pub.TTLAfterWindowVar
	TimeoutVar          = pub.TimeoutVar
	LeaseMaxVar         = pub.LeaseMaxVar
	FinishBudgetVar     = pub.FinishBudgetVar
	CacheSizeVar        = pub.CacheSizeVar
	PayloadIgnoreVar    = pub.PayloadIgnoreVar
	KeySecretVar        = pub.KeySecretVar
	TxTablesVar         = pub.TxTablesVar
	BatchConcurrencyVar = pub.BatchConcurrencyVar
	MinRemainingVar     = pub.MinRemainingVar
	MaxMessageBytesVar  = pub.MaxMessageBytesVar
	DeliveryVar         = pub.DeliveryVar
	FIFOVar             = pub.FIFOVar
	MaxReceiveCountVar  = pub.MaxReceiveCountVar
	BackoffBaseVar      = pub.BackoffBaseVar
	BackoffCapVar       = pub.BackoffCapVar
	BackoffFIFOCapVar   = pub.BackoffFIFOCapVar
	ConsumerVar         = pub.ConsumerVar
	MetricsNamespaceVar = pub.MetricsNamespaceVar
	SourceVar           = pub.SourceVar
	StreamImagesVar     = pub.StreamImagesVar
	StreamRemovesVar    = pub.StreamRemovesVar
	WebhookProviderVar  = pub.WebhookProviderVar
	WebhookSecretVar    = pub.WebhookSecretVar
	ClientAttributeVar  = pub.ClientAttributeVar
	ReplayHeadersVar    = pub.ReplayHeadersVar
	HashHeadersVar      = pub.HashHeadersVar
	MaxRequestBytesVar  = pub.MaxRequestBytesVar
	StepNameVar         = pub.StepNameVar
)

// Source says what feeds the consumer (Settings.Source): which handler
// entry point may run under the contract, and which of its settings apply
// (the sources' table, source.go).
type Source = pub.Source

// The sources.
const (
	SourceQueue           = pub.SourceQueue
	SourceKinesis         = pub.SourceKinesis
	SourceDynamoDBStreams = pub.SourceDynamoDBStreams
	SourceHTTP            = pub.SourceHTTP
	SourceStep            = pub.SourceStep
)

// Delivery says what the queue's bodies are (Settings.Delivery).
type Delivery = pub.Delivery

// The deliveries.
const (
	Auto        = pub.Auto
	Raw         = pub.Raw
	Envelope    = pub.Envelope
	EventBridge = pub.EventBridge
	S3          = pub.S3
)

// Removes says what a DynamoDB stream's consumer does with a REMOVE record
// (Settings.StreamRemoves).
type Removes = pub.Removes

// The choices for REMOVE records.
const (
	RemoveRun         = pub.RemoveRun
	RemoveSkip        = pub.RemoveSkip
	RemoveSkipExpired = pub.RemoveSkipExpired
)
