//go:build nopaste

package service

import (
	"context"

	"github.com/distributed-nav/distributed-nav/playground/compare"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// comparePasted refuses the pasted run in a build without the paste box
// (the page sends a pasted run to the full binary only).
func (s *Service) comparePasted(_ context.Context, _ *Request, _ tune.Func, p *EstimatorPage) (*compare.Result, *Figure) {
	p.CompareError = &FieldError{Field: "nccl_tests", Message: "this module does not read pasted runs; the page loads the one that does"}
	return nil, nil
}
