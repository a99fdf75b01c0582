package shuffle

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/shuffle/kernel"
)

// The partitioning hash is defined in package kernel (kernel.HashSeed and
// kernel.Fold), where the executor's hash tables share its column walk.
const (
	HashSeed = kernel.HashSeed
	NullHash = kernel.NullHash
)

// HashColumns sets out[i] to the partitioning hash of row i of cols (see
// HashSeed for the definition). All columns and out must have the same
// length. With no columns every row hashes to HashSeed. It returns an
// error for a column type it cannot hash.
func HashColumns(cols []arrow.Array, out []uint64) error {
	for i := range out {
		out[i] = HashSeed
	}
	for ci, c := range cols {
		if c.Len() != len(out) {
			return fmt.Errorf("shuffle: hash: column %d has %d rows, want %d", ci, c.Len(), len(out))
		}
		if err := kernel.Fold(c, out); err != nil {
			return fmt.Errorf("shuffle: hash: column %d: %w", ci, err)
		}
	}
	return nil
}

// HashSupported reports whether HashColumns can hash columns of type t.
func HashSupported(t arrow.DataType) bool { return kernel.Supported(t) }
