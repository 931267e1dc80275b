// Package apicheck holds the tests that hold the library's exported API as
// a user's module sees it, in the spirit of Go's own api/ files and
// cmd/api: TestNoInternalTypes (no exported declaration names a type that
// a user's module cannot name) and TestAPI (the exported API is the
// checked-in listing, api/next.txt, and a change to it is a CHANGELOG
// entry). Both read the library's packages as the compiler exports them
// (go list -export, go/types), with no dependency beyond the standard
// library.
package apicheck
