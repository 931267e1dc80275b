// Package webhookdiff holds the webhook verifiers of package webhook to the
// providers' own libraries: for each provider, a matrix of signed and
// tampered requests is judged by the official verifier and by ours, and the
// two must accept exactly the same requests, with our key the event id the
// official library reads. Shopify has no official Go library: its matrix is
// judged by the algorithm its documentation gives, written here from that
// documentation. The cases where a verifier refuses what the official
// library accepts (each listed on the verifier's type) are not in the
// matrices; package webhook's tests pin them.
package webhookdiff
