package dynamodbstream

import (
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// TestOwnOf: ownOf carries the contract's StreamImages and StreamRemoves
// into this source's settings: the old image only with
// NEW_AND_OLD_IMAGES, the REMOVE choice as given.
func TestOwnOf(t *testing.T) {
	s := contract.Defaults(time.Minute)
	s.Table, s.Namespace, s.Consumer = "t", "ns", "c"
	s.Source, s.StreamImages, s.StreamRemoves = contract.SourceDynamoDBStreams, contract.ImagesNewAndOld, contract.RemoveSkip
	if got := ownOf(s); !got.oldImage || got.removes != contract.RemoveSkip {
		t.Errorf("ownOf(%s, %s) = %+v", s.StreamImages, s.StreamRemoves, got)
	}
	s.StreamImages, s.StreamRemoves = contract.ImagesNew, contract.RemoveSkipExpired
	if got := ownOf(s); got.oldImage || got.removes != contract.RemoveSkipExpired {
		t.Errorf("ownOf(%s, %s) = %+v: ImagesNew asks for no old image", s.StreamImages, s.StreamRemoves, got)
	}
}
