package endpoint

// GetSecretValue is getSecretValue, for the tests of package endpoint_test.
var GetSecretValue = getSecretValue
