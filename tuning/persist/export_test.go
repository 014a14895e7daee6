package persist

import "github.com/nettune/nettune/tuning"

// VerifyAs is verifyAs, for the tests of the VerifyFunc AddVerifier
// registers.
func VerifyAs[T any, P interface {
	*T
	tuning.Reversible
}]() VerifyFunc {
	return verifyAs[T, P]()
}
