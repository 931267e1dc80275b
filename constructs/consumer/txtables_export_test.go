package consumer

// LinksTransactions reports whether a bootstrap links a transactional
// effect, as the construct reads it.
var LinksTransactions = linksTransactions
