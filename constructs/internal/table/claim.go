package table

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// ClaimsID is the id of the construct, a child of the app (the root of the
// construct tree), that holds the namespace claims of the app's consumers.
// It synthesizes nothing: it lives in the tree only.
const ClaimsID = "IdempotentConsumerNamespaceClaims"

// Metadata keys of a claim: the consumer that made it, the table (Key), the
// namespace, and the StringLike pattern of the leading keys of its records
// (othersPattern).
const (
	claimMetadata          = "idempotent-consumer:claimedBy"
	claimTableMetadata     = "idempotent-consumer:table"
	claimNamespaceMetadata = "idempotent-consumer:namespace"
	claimPatternMetadata   = "idempotent-consumer:leadingKeys"
)

// Key is how the claims know a table: by its physical name whenever that
// name is known at synth (a table of the app created with a literal
// TableName, or one imported by a concrete name or ARN: "table <name>"), so
// that a table created in the app and imported by its name elsewhere in it
// is one table; else by its construct ("construct <address>").
func Key(table awsdynamodb.ITable) string {
	name := table.TableName()
	switch l1 := table.Node().DefaultChild().(type) {
	case awsdynamodb.CfnTable:
		name = l1.TableName() // TableName() of the L2 is a Ref
	case awsdynamodb.CfnGlobalTable:
		name = l1.TableName()
	}
	if name != nil && *name != "" && !*awscdk.Token_IsUnresolved(name) {
		return "table " + *name
	}
	return "construct " + *table.Node().Addr()
}

// holder is the construct of c's app that holds the claims, created on
// first use.
func holder(c constructs.IConstruct) (constructs.Construct, error) {
	root, ok := c.Node().Root().(constructs.Construct)
	if !ok {
		return nil, fmt.Errorf("the root of %s is not a construct of this process, so its consumers' namespaces cannot be claimed on it", *c.Node().Path())
	}
	if h, ok := root.Node().TryFindChild(jsii.String(ClaimsID)).(constructs.Construct); ok {
		return h, nil
	}
	return constructs.NewConstruct(root, jsii.String(ClaimsID)), nil
}

// ClaimNamespace claims the namespace of the runtime settings s on table
// for the consumer c, or says
// which consumer of c's app holds it already. The claims live on the
// construct tree, under the app (ClaimsID), so that two apps of one process
// (two tests of one test binary, each with an app of its own) never see each
// other's. A table is known by Key: its physical name when known at synth,
// else its construct. On a global table in strong consistency, region is
// the claiming construct's Region: the construct of each Region shares its
// namespace (one fact, deduplicated across Regions), and two constructs of
// one Region may not; "" on a table of one Region.
func ClaimNamespace(c constructs.Construct, table awsdynamodb.ITable, s contract.Settings, region string) error {
	namespace := s.Namespace
	tableKey := Key(table)
	if region != "" {
		tableKey += " in " + region
	}
	h, err := holder(c)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(tableKey + "\x00" + namespace))
	id := hex.EncodeToString(sum[:16])
	if prior := h.Node().TryFindChild(jsii.String(id)); prior != nil {
		//lint:ignore ST1005 the message starts with the prop it is about
		return fmt.Errorf("Namespace %q on the table %s is the namespace of the consumer %s already: two consumers with one namespace on one table suppress each other's facts; give each consumer a Namespace of its own", namespace, *table.Node().Path(), metadata(prior, claimMetadata))
	}
	claim := constructs.NewConstruct(h, jsii.String(id))
	claim.Node().AddMetadata(jsii.String(claimMetadata), c.Node().Path(), nil)
	claim.Node().AddMetadata(jsii.String(claimTableMetadata), jsii.String(tableKey), nil)
	claim.Node().AddMetadata(jsii.String(claimNamespaceMetadata), jsii.String(namespace), nil)
	claim.Node().AddMetadata(jsii.String(claimPatternMetadata), jsii.String(othersPattern(s)), nil)
	return nil
}

// othersPattern is the IAM StringLike pattern of the leading keys of the
// records of the consumer whose runtime settings are s, as another
// consumer's transactional grant excludes them (ExceptOthers): its
// namespace's keys where the record key is the partition key
// (LeadingKeys), else its fixed partition value, every character written
// literally.
func othersPattern(s contract.Settings) string {
	if s.TableRecordKeyIn == contract.KeyInSort {
		return strings.NewReplacer("$", "${$}", "*", "${*}", "?", "${?}").Replace(s.TableFixedKeyValue)
	}
	return LeadingKeys(s.Namespace)
}

// claimed is a namespace claimed on a table, with the pattern of its
// records' leading keys (othersPattern).
type claimed struct{ namespace, pattern string }

// claimedNamespaces are the namespaces claimed in h on the table of key,
// sorted.
func claimedNamespaces(h constructs.IConstruct, key string) []claimed {
	var out []claimed
	for _, claim := range *h.Node().Children() {
		if metadata(claim, claimTableMetadata) == key {
			out = append(out, claimed{metadata(claim, claimNamespaceMetadata), metadata(claim, claimPatternMetadata)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].namespace < out[j].namespace })
	return out
}

// metadata is the value of a claim's metadata of type key ("(unknown)"
// without one).
func metadata(claim constructs.IConstruct, key string) string {
	for _, m := range *claim.Node().Metadata() {
		if m.Type != nil && *m.Type == key {
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
