package plan

import "fmt"

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

// IsUserError reports whether err is the user's: it carries a code of class
// user (a UserError anywhere in its chain, a decimal overflow, a coded
// error such as a bad cast).
func IsUserError(err error) bool {
	c := CodeOf(err)
	return c != "" && ClassOf(c) == ClassUser
}
