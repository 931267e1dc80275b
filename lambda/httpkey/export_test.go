package httpkey

var HeaderDropped = headerDropped
var ParseKey = parseKey
var StableIAM = stableIAM
var DefaultMaxKeyBytes = defaultMaxKeyBytes
var ErrBadKey = errBadKey
