// Package schema names the attributes of an idempotency record as package
// dynamostore writes them, with no dependency beyond the standard library.
//
// The construct and the contract read the key and TTL attribute names from
// here (whose values are the public package contract's, which users
// read); the store writes the attributes named here.
package schema

import "github.com/idempotent-consumer/idempotent-consumer/contract"

// Attribute names of a record. The partition key is Key (a string); the TTL
// attribute to enable on the table is TTL (epoch seconds).
const (
	// Key is the partition key: "<namespace>#<key>", or its keyed hash
	// (the public contract.PartitionKey, the design of the table the
	// constructs create).
	Key = contract.PartitionKey
	// TTL is the epoch second after which DynamoDB may delete the record
	// (contract.TTLAttribute).
	TTL = contract.TTLAttribute
	// Status is IN_PROGRESS or COMPLETED.
	Status = "status"
	// Owner is the reservation's owner token.
	Owner = "owner"
	// Lease is the end of an IN_PROGRESS record's lease, epoch milliseconds.
	Lease = "lease_until"
	// Expires is the end of a COMPLETED record's business window, epoch
	// seconds.
	Expires = "expires_at"
	// Hash is the payload hash, with its version tag ("v2:…", or "k2:…"
	// keyed with a key secret).
	Hash = "payload_hash"
	// Result is the effect's result, as the effect returned it.
	Result = "result"
	// Layout is the version of the record's layout (Layout).
	Layout = "layout"
	// Replay is the operator's audit of a deliberate replay that wrote the
	// record (idempotency.Record.Replay); absent otherwise.
	Replay = "replay"
)

// LayoutVersion is the record layout this release writes in Layout, and the
// only one it reads (dynamostore's layout); the sweeper deletes only records
// of it.
const LayoutVersion = 1

// Taken reports whether name is an attribute of the record other than its
// key and TTL (Status, Owner, Lease, Expires, Hash, Result, Layout, Replay): a name
// that a table's key or TTL attribute cannot take, since the store writes
// the record's own values there. The store refuses such a design
// (dynamostore.Store.Err), and the runtime contract refuses it at synth and
// at init, from this one list.
func Taken(name string) bool {
	switch name {
	case Status, Owner, Lease, Expires, Hash, Result, Layout, Replay:
		return true
	}
	return false
}
