// Package privacy holds the test that every source keeps the promise of
// hashed keys (DESIGN.md, "Hashed keys"): under idempotency.Config.KeySecret
// no log line, metric line or stored record holds a business key or a hash
// of a payload that anyone can compute without the secret. It sits outside
// the adapters so that one table can run them all (queue, EventBridge, S3,
// Kinesis, DynamoDB Streams, HTTP, webhooks) without an import cycle.
package privacy
