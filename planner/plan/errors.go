package plan

import (
	"errors"
	"fmt"
)

// UserError marks an error caused by the query or its data rather than the
// infrastructure: retrying cannot help, so the coordinator fails the job at
// once with the message.
type UserError struct{ Err error }

func (e *UserError) Error() string { return e.Err.Error() }
func (e *UserError) Unwrap() error { return e.Err }

// UserErrorf returns a new UserError.
func UserErrorf(format string, args ...any) error {
	return &UserError{Err: fmt.Errorf(format, args...)}
}

// IsUserError reports whether err is the user's: a UserError anywhere in its
// chain, or a decimal overflow.
func IsUserError(err error) bool {
	var ue *UserError
	return errors.As(err, &ue) || errors.Is(err, ErrDecimalOverflow)
}
