// Package apptest holds the tests of the constructs that need what a CDK
// app that uses them must not link: cdk-nag's packs (cdktest/nagtest) and
// the handler (with the AWS SDK). They build the stacks of package
// consumertest, as the construct's own tests do, and check them as a user's
// app would: cdk-nag finds nothing that is not suppressed with its reason,
// the metrics the construct reads are the ones the handler writes, and the
// construct's cdk-nag metadata is cdk-nag's own. constructs/... stays free
// of both (TestTheConstructsLinkNoSDKAndNoCDKNag there).
package apptest
