package endpoint

import "testing"

// TestParseSecrets: a Secrets Manager value is a JSON array of secrets (a
// rotation) or one secret as it is; an empty one, or none, is refused.
func TestParseSecrets(t *testing.T) {
	got, err := parseSecrets(`["new","old"]`)
	if err != nil || len(got) != 2 || string(got[1]) != "old" {
		t.Fatalf("parseSecrets(list) = %q, %v", got, err)
	}
	if got, err := parseSecrets("whsec_x"); err != nil || len(got) != 1 || string(got[0]) != "whsec_x" {
		t.Fatalf("parseSecrets(one) = %q, %v", got, err)
	}
	for _, bad := range []string{"", "[]", `[""]`, `[1]`} {
		if _, err := parseSecrets(bad); err == nil {
			t.Errorf("parseSecrets(%q) accepted", bad)
		}
	}
}

// TestParseClient: the contract's client attributes name a client function,
// none for "" and "none"; the others are refused.
func TestParseClient(t *testing.T) {
	for _, ok := range []string{"", "none", "iam", "claim:sub", "header:X-Tenant"} {
		f, err := parseClient(ok)
		if err != nil || (f == nil) != (ok == "" || ok == "none") {
			t.Errorf("parseClient(%q) = a function %t, %v", ok, f != nil, err)
		}
	}
	for _, bad := range []string{"IAM", "claim:", "header", "jwt:sub"} {
		if _, err := parseClient(bad); err == nil {
			t.Errorf("parseClient(%q) accepted", bad)
		}
	}
}
