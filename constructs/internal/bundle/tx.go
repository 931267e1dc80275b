package bundle

import (
	"bytes"
	"debug/elf"
	"fmt"
)

// txMarker is the name, in a Go binary's function table, of the function
// every transactional entry point of the library goes through, whatever
// its source: batch.TxEffect (lambda/internal/batch), which the NewTx,
// FromEnvTx and StartTx of sqsbatch, eventbridge, kinesis and
// dynamodbstream call. It is generic, so a binary holds it (as an
// instantiation, "TxEffect[go.shape…]") only when some code reachable from
// main instantiates it; the function table keeps the names of inlined
// functions too, for tracebacks.
const txMarker = libraryPath + "/lambda/internal/batch.TxEffect["

// LinksTransactions reports whether the Linux bootstrap at path holds a
// transactional effect: whether its function table (the .gopclntab
// section, which a Go binary keeps when stripped with -s -w, because the
// runtime needs it) names batch.TxEffect. Its limits: a handler that
// drives idempotency.Guard.RunTx itself, without the library's entry
// points, is not seen; a binary that links the transactional path without
// ever taking it (a main that chooses at run time) is seen as
// transactional.
func LinksTransactions(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return false, fmt.Errorf("read the bootstrap %s: %w", path, err)
	}
	defer f.Close()
	s := f.Section(".gopclntab")
	if s == nil {
		return false, fmt.Errorf("the bootstrap %s has no Go function table (.gopclntab)", path)
	}
	data, err := s.Data()
	if err != nil {
		return false, fmt.Errorf("read the function table of the bootstrap %s: %w", path, err)
	}
	return bytes.Contains(data, []byte(txMarker)), nil
}
