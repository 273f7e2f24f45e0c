package service

import (
	"context"
	"errors"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/tune"
	"github.com/distributed-nav/distributed-nav/playground/units"
)

// ParseBytes reads a byte count as `ncclsim estimate --bytes` does (see
// units.ParseBytes); errors name the "bytes" field.
func ParseBytes(s string) (uint64, error) {
	n, err := units.ParseBytes(s)
	if err != nil {
		return 0, fieldErr("bytes", err.Error())
	}
	return n, nil
}

// calibration returns the calibrated estimator's parameters: the
// Calibration field when set (ncclsim --calibration FILE), else the
// built-in ones (parsed once).
func (s *Service) calibration() (*estimate.Calibration, error) {
	if s.Calibration != nil {
		return s.Calibration, nil
	}
	if s.cal == nil {
		c, err := estimate.DefaultCalibration()
		if err != nil {
			return nil, err
		}
		s.cal = c
	}
	return s.cal, nil
}

// datasets returns the published measurements (parsed once).
func (s *Service) datasets() ([]*estimate.Dataset, error) {
	if s.sets == nil {
		d, err := estimate.DefaultDatasets()
		if err != nil {
			return nil, err
		}
		s.sets = d
	}
	return s.sets, nil
}

// modelAndEstimator builds (or reuses) the model for req and its
// calibrated estimator, failing the way every estimator question reports:
// an unusable tuning setup names its field.
func (s *Service) modelAndEstimator(ctx context.Context, req *Request) (*built, *estimate.System, error) {
	b, err := s.tuned(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	es, err := s.estimator(b, req.Fabric)
	if err != nil {
		return nil, nil, err
	}
	return b, es, nil
}

// withWarnings adds the topology warnings of b to err when it is a
// *FieldError, so that a refused estimate still shows what the topology
// parser noticed (often the reason).
func withWarnings(err error, b *built) error {
	var fe *FieldError
	if errors.As(err, &fe) && len(b.host.warns) > 0 {
		c := *fe
		c.Warnings = b.host.warns
		return &c
	}
	return err
}

// estimator returns the calibrated estimator of b for the fabric (cached
// on b).
func (s *Service) estimator(b *built, fabric string) (*estimate.System, error) {
	fab, err := estimate.ParseFabric(fabric)
	if err != nil {
		return nil, fieldErr("fabric", err.Error())
	}
	if es, ok := b.est[fab]; ok {
		return es, nil
	}
	cal, err := s.calibration()
	if err != nil {
		return nil, err
	}
	es, err := estimate.NewSystem(b.res, fab, cal)
	if err != nil {
		return nil, err
	}
	if b.est == nil {
		b.est = map[estimate.Fabric]*estimate.System{}
	}
	b.est[fab] = es
	return es, nil
}

// estimateInputs parses the collective, size and element type of req.
func estimateInputs(req *Request) (tune.Func, uint64, tune.Datatype, error) {
	if strings.TrimSpace(req.Coll) == "" {
		return 0, 0, 0, fieldErr("coll", "choose a collective")
	}
	f, err := lookupColl(req.Coll, "")
	if err != nil {
		return 0, 0, 0, err
	}
	n, err := ParseBytes(req.Bytes)
	if err != nil {
		return 0, 0, 0, err
	}
	if n > estimate.MaxBytes {
		return 0, 0, 0, fieldErr("bytes", "at most 1 PiB")
	}
	dts := req.Dtype
	if strings.TrimSpace(dts) == "" {
		dts = "float32"
	}
	dt, err := tune.LookupDatatype(dts)
	if err != nil {
		return 0, 0, 0, fieldErr("dtype", err.Error())
	}
	return f, n, dt, nil
}

// Prediction is one estimator's answer (the estimate package's own
// result, whose json tags the CLI has always printed).
type Prediction = estimate.Prediction

// ModelPrediction adds the tuning model's own terms to Prediction.
type ModelPrediction struct {
	Prediction
	// LatencyUs and BandwidthGBps are the table cell of the chosen pair
	// (before the size-dependent corrections of ncclTopoGetAlgoTime).
	LatencyUs     float64 `json:"latency_us"`
	BandwidthGBps float64 `json:"bandwidth_GBps"`
	// Costs is the cost table NCCL compared (µs; -1 unusable, absent when
	// the pair was not considered).
	Costs map[string]float64 `json:"costs"`
}

// EstimateResult is the answer to the estimate question, the object
// `ncclsim estimate --json` prints. The top-level fields repeat the block
// named by Source (the calibrated estimate).
type EstimateResult struct {
	Checked      `json:"-"`
	Coll         string `json:"coll"`
	Bytes        uint64 `json:"bytes"`
	BytesPerRank uint64 `json:"bytes_per_rank"`
	Datatype     string `json:"dtype"`
	NRanks       int    `json:"nranks"`
	NNodes       int    `json:"nnodes"`
	Topology     string `json:"topology"`
	Prediction
	Source string          `json:"source"`
	Model  ModelPrediction `json:"model"`
	// Calibrated is the calibrated estimate with the terms it is made of,
	// its path class, the error band observed for that class and how many
	// datasets support it.
	Calibrated *estimate.Calibrated `json:"calibrated"`
	Env        map[string]string    `json:"env"`
	Problems   []Problem            `json:"problems"`
}

// Estimate answers the estimate question for req (system fields, Coll,
// Bytes, Dtype default float32, Fabric default auto).
func (s *Service) Estimate(ctx context.Context, req *Request) (*EstimateResult, error) {
	r, _, _, err := s.estimate(ctx, req)
	return r, err
}

// estimate computes the EstimateResult and returns the estimator and the
// request's parsed collective and type for the pages.
func (s *Service) estimate(ctx context.Context, req *Request) (*EstimateResult, *estimate.System, *estimate.Estimate, error) {
	f, n, dt, err := estimateInputs(req)
	if err != nil {
		return nil, nil, nil, err
	}
	b, err := s.tuned(ctx, req)
	if err != nil {
		return nil, nil, nil, err
	}
	es, err := s.estimator(b, req.Fabric)
	if err != nil {
		return nil, nil, nil, withWarnings(err, b)
	}
	e, err := es.Estimate(tune.Request{Func: f, NBytes: n, Datatype: dt})
	if err != nil {
		return nil, nil, nil, withWarnings(selectField(b.res.Tune, err), b)
	}
	m := b.res.Tune
	mb := ModelPrediction{Prediction: e.Model,
		LatencyUs:     e.ModelLatencyUs,
		BandwidthGBps: e.ModelBandwidthGBps,
		Costs:         map[string]float64{}}
	for a := tune.Algorithm(0); a < tune.NumAlgorithms; a++ {
		for p := tune.Protocol(0); p < tune.NumProtocols; p++ {
			if v := e.Costs[a][p]; v != tune.Ignore {
				mb.Costs[a.String()+"/"+p.String()] = float64(v)
			}
		}
	}
	cb := e.Calibrated
	out := &EstimateResult{Checked: b.checked(),
		Coll: f.String(), Bytes: n, BytesPerRank: n, Datatype: dt.String(), NRanks: m.Sys.NRanks, NNodes: m.Sys.NNodes, Topology: b.host.name,
		Prediction: cb.Prediction, Source: "calibrated", Model: mb, Calibrated: &cb,
		Env: envMap(b.env), Problems: problems(b.problems),
	}
	if f == tune.AllGather || f == tune.ReduceScatter {
		out.BytesPerRank = n / uint64(m.Sys.NRanks)
	}
	return out, es, &e, nil
}

// EstimatePage is the answer of one estimate on a page: Result and the
// ncclsim line.
type EstimatePage struct {
	Result  *EstimateResult `json:"result"`
	Command string          `json:"command"`
}

// EstimatePage answers one estimate for a page.
func (s *Service) EstimatePage(ctx context.Context, req *Request) (*EstimatePage, error) {
	r, err := s.Estimate(ctx, req)
	if err != nil {
		return nil, err
	}
	return &EstimatePage{Result: r, Command: commandLine("estimate", req, nil)}, nil
}
