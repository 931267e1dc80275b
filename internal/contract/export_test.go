package contract

var DefaultTimeout = defaultTimeout
