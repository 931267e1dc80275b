package core

// GlobalTable makes the idempotency table a DynamoDB global table in
// multi-Region strong consistency (MRSC): a conditional write sees every
// Region's writes, so deliveries of one fact in two Regions run its effect
// once (DESIGN.md, "Two Regions"). Set it on the construct in each Region's
// stack, with the same values; each stack needs a concrete Region
// (awscdk.StackProps.Env), one of Regions.
//
// Without Table, the construct in the stack of the first of Regions creates
// the table (awsdynamodb.TableV2, MultiRegionConsistency STRONG, the other
// Regions its replicas, WitnessRegion its witness): deploy that stack first
// (the app adds the dependency); the construct in the stack of another of
// Regions imports it by TableName, its local replica. With Table (imported,
// in each Region, by its name), GlobalTable declares what the construct
// cannot read: that the table is MRSC, in those Regions; TableName is then
// the Table's own and stays nil. A table the app defines (a TableV2) is read,
// and needs no declaration.
//
// MRSC has no TTL: the construct of the first Region creates a sweeper, one
// per table, that deletes the records whose TTL attribute has passed. It has
// no transactions either: TransactionalTables, GrantTransactionalWrites and
// a handler that links a transactional effect are refused.
type GlobalTable struct {
	// Regions are the Regions of the table's replicas, in which the
	// constructs run: three, or two with WitnessRegion, all of one MRSC
	// Region set (US: us-east-1, us-east-2, us-west-2; EU: eu-west-1,
	// eu-west-2, eu-west-3, eu-central-1; AP: ap-northeast-1,
	// ap-northeast-2, ap-northeast-3). The first creates the table and runs
	// its sweeper. Required.
	Regions *[]*string

	// WitnessRegion is the witness of a table with two replicas: a Region
	// of their set that keeps the quorum and serves no request.
	//
	// Default: none, the table has three replicas.
	WitnessRegion *string

	// TableName is the table's name, the same in every Region, by which the
	// stacks of the other Regions import the table the first one creates.
	// Required without Table; nil with one.
	TableName *string
}
