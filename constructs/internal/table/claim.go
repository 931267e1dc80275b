// Package table is the idempotency table of a consumer of the family: the
// table a consumer creates, or a shared one it takes, with the claim of the
// consumer's namespace on it, the check of a shared table's schema, and the
// namespace-scoped grant of the items the guard writes.
package table

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// ClaimsID is the id of the construct, a child of the app (the root of the
// construct tree), that holds the namespace claims of the app's consumers.
// It synthesizes nothing: it lives in the tree only.
const ClaimsID = "IdempotentConsumerNamespaceClaims"

// claimMetadata is the metadata key under which a claim names its consumer.
const claimMetadata = "idempotent-consumer:claimedBy"

// ClaimNamespace claims namespace on table for the consumer c, or says
// which consumer of c's app holds it already. The claims live on the
// construct tree, under the app (ClaimsID), so that two apps of one process
// (two tests of one test binary, each with an app of its own) never see each
// other's. A table is known by its construct, or by its name when it is
// imported by a concrete name (two imports of one table are one table).
func ClaimNamespace(c constructs.Construct, table awsdynamodb.ITable, namespace string) error {
	tableKey := "construct " + *table.Node().Addr()
	if name := table.TableName(); name != nil && !*awscdk.Token_IsUnresolved(name) {
		tableKey = "table " + *name
	}
	root, ok := c.Node().Root().(constructs.Construct)
	if !ok {
		return fmt.Errorf("the root of %s is not a construct of this process, so its consumers' namespaces cannot be claimed on it", *c.Node().Path())
	}
	var holder constructs.Construct
	if h, ok := root.Node().TryFindChild(jsii.String(ClaimsID)).(constructs.Construct); ok {
		holder = h
	} else {
		holder = constructs.NewConstruct(root, jsii.String(ClaimsID))
	}
	sum := sha256.Sum256([]byte(tableKey + "\x00" + namespace))
	id := hex.EncodeToString(sum[:16])
	if prior := holder.Node().TryFindChild(jsii.String(id)); prior != nil {
		//lint:ignore ST1005 the message starts with the prop it is about
		return fmt.Errorf("Namespace %q on the table %s is the namespace of the consumer %s already: two consumers with one namespace on one table suppress each other's facts; give each consumer a Namespace of its own", namespace, *table.Node().Path(), claimant(prior))
	}
	claim := constructs.NewConstruct(holder, jsii.String(id))
	claim.Node().AddMetadata(jsii.String(claimMetadata), c.Node().Path(), nil)
	return nil
}

// claimant is the path of the consumer that made claim.
func claimant(claim constructs.IConstruct) string {
	for _, m := range *claim.Node().Metadata() {
		if m.Type != nil && *m.Type == claimMetadata {
			switch d := m.Data.(type) {
			case string:
				return d
			case *string:
				return *d
			}
		}
	}
	return "(unknown)"
}
