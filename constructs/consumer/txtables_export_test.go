package consumer

import "github.com/idempotent-consumer/idempotent-consumer/constructs/internal/bundle"

// LinksTransactions reports whether a bootstrap links a transactional
// effect, as the construct reads it.
var LinksTransactions = bundle.LinksTransactions
