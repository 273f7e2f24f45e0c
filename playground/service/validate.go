package service

import (
	"context"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
)

// ValidateRequest asks for the estimators' error on published runs.
type ValidateRequest struct {
	// Datasets are the runs to compare with (nil: the built-in copy of
	// data/measurements).
	Datasets []*estimate.Dataset
	// MinBytes is the smallest size counted in the statistics, as typed
	// ("1M" when empty).
	MinBytes string
}

// DefaultValidateMinBytes is the smallest size validate counts by default.
const DefaultValidateMinBytes = "1M"

// ValidateResult is the answer to the validate question, the object
// `ncclsim validate --json` prints.
type ValidateResult = estimate.Report

// Validate compares NCCL's model and the calibrated estimator (the
// service's calibration) with every dataset of req.
func (s *Service) Validate(ctx context.Context, req ValidateRequest) (*ValidateResult, error) {
	mb := req.MinBytes
	if mb == "" {
		mb = DefaultValidateMinBytes
	}
	minBytes, err := ParseBytes(mb)
	if err != nil {
		return nil, &FieldError{Field: "min_bytes", Message: err.(*FieldError).Message}
	}
	sets := req.Datasets
	if sets == nil {
		if sets, err = s.datasets(); err != nil {
			return nil, err
		}
	}
	cal, err := s.calibration()
	if err != nil {
		return nil, err
	}
	return estimate.Validate(ctx, sets, estimate.CachedBuilder(estimate.BuildPreset), cal, minBytes)
}
