package limits

import "time"

// DynamoDB's multi-Region strong consistency (MRSC), as the DynamoDB
// Developer Guide states it ("How DynamoDB global tables work",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/V2globaltables_HowItWorks.html,
// consistency modes): a table "must be deployed in exactly three Regions"
// (three replicas, or two and a witness), of one Region set ("MRSC global
// tables cannot span Region sets"); no transaction APIs, no TTL, no local
// secondary indexes.

// MRSCRegions is how many Regions an MRSC table spans: its replicas and its
// witness, if any.
const MRSCRegions = 3

// MRSCRegionSets are the Region sets of MRSC, by name: a table's Regions
// are all of one set.
var MRSCRegionSets = map[string][]string{
	"US": {"us-east-1", "us-east-2", "us-west-2"},
	"EU": {"eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1"},
	"AP": {"ap-northeast-1", "ap-northeast-2", "ap-northeast-3"},
}

// MRSCRegionSet is the name of the MRSC Region set of region, and false
// for a Region of none.
func MRSCRegionSet(region string) (string, bool) {
	for name, regions := range MRSCRegionSets {
		for _, r := range regions {
			if r == region {
				return name, true
			}
		}
	}
	return "", false
}

// DefaultSweepInterval is how often the sweeper of an MRSC table, which has
// no TTL, deletes the records whose TTL attribute has passed: hourly.
const DefaultSweepInterval = time.Hour

// SweepTimeout is the sweeper function's timeout: Lambda's longest, 15
// minutes; a table too large for one run is swept over several (its
// deletes are conditional, so a second pass is harmless).
const SweepTimeout = 15 * time.Minute
