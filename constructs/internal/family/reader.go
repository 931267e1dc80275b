package family

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
)

// Reader reads props that must be concrete numbers and durations,
// collecting the ones it cannot read (tokens, fractions) as problems.
type Reader struct{ Problems []string }

// Duration returns d, or def when d is nil or cannot be read.
func (rd *Reader) Duration(name string, d awscdk.Duration, def time.Duration) time.Duration {
	if v, ok := rd.ReadDuration(name, d); ok {
		return v
	}
	return def
}

// ReadDuration returns d, and false when d is nil or cannot be read (a
// problem).
func (rd *Reader) ReadDuration(name string, d awscdk.Duration) (time.Duration, bool) {
	if d == nil {
		return 0, false
	}
	v, ok := Concrete(d)
	if !ok {
		rd.Problems = append(rd.Problems, fmt.Sprintf("%s is a token that CDK resolves only at deployment, but the construct needs its value to check it against the other settings and write it into the handler's environment; give a concrete duration such as awscdk.Duration_Seconds(jsii.Number(30))", name))
	}
	return v, ok
}

// Count returns n as a whole number, or def when n is nil or cannot be
// read.
func (rd *Reader) Count(name string, n *float64, def int) int {
	if v, ok := rd.ReadCount(name, n); ok {
		return v
	}
	return def
}

// ReadCount returns n as a whole number, and false when n is nil or
// cannot be read (a problem).
func (rd *Reader) ReadCount(name string, n *float64) (int, bool) {
	switch {
	case n == nil:
		return 0, false
	case *awscdk.Token_IsUnresolved(n):
		rd.Problems = append(rd.Problems, fmt.Sprintf("%s is a token that CDK resolves only at deployment, but the construct needs its value; give a number", name))
		return 0, false
	case !IsInt(*n) || math.Abs(*n) > math.MaxInt32:
		rd.Problems = append(rd.Problems, fmt.Sprintf("%s %s is not a whole number in range; give a whole number", name, FormatNumber(*n)))
		return 0, false
	}
	return int(*n), true
}

// Concrete converts a duration that is not a token to a time.Duration.
func Concrete(d awscdk.Duration) (time.Duration, bool) {
	if *d.IsUnresolved() {
		return 0, false
	}
	return time.Duration(*d.ToMilliseconds(nil)) * time.Millisecond, true
}

// FormatNumber writes f in plain decimal ("1048576", not "1.048576e+06").
func FormatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// IsInt says f is a whole number.
func IsInt(f float64) bool { return f == math.Trunc(f) && !math.IsInf(f, 0) }
