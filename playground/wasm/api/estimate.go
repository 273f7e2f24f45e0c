package api

import (
	"context"
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

// calibration returns the calibrated estimator's parameters (parsed once).
func (s *Session) calibration() (*estimate.Calibration, error) {
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
func (s *Session) datasets() ([]*estimate.Dataset, error) {
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
func (s *Session) modelAndEstimator(ctx context.Context, req *Request) (*built, *estimate.System, error) {
	b, err := s.build(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	if b.tuneErr != nil {
		return nil, nil, tuneField(b.tuneErr)
	}
	es, err := s.estimator(b, req.Fabric)
	if err != nil {
		return nil, nil, err
	}
	return b, es, nil
}

// estimator returns the calibrated estimator of b for the fabric (cached
// on b).
func (s *Session) estimator(b *built, fabric string) (*estimate.System, error) {
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
	es, err := estimate.NewSystem(b.result(), fab, cal)
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

// writePrediction writes the fields of estimate.Prediction.
func writePrediction(w *jw, p estimate.Prediction) {
	w.kstr("algo", p.Algo)
	w.kstr("proto", p.Proto)
	w.kint("nchannels", p.NChannels)
	w.kint("nthreads", p.NThreads)
	w.kf64("time_us", p.TimeUs)
	w.kf64("algbw_GBps", p.AlgBwGBps)
	w.kf64("busbw_GBps", p.BusBwGBps)
}

// writeBand writes an estimate.Band.
func writeBand(w *jw, b estimate.Band) {
	w.obj()
	w.kf64("median_pct", b.MedianPct)
	w.kf64("max_pct", b.MaxPct)
	w.kf64("over_pct", b.OverPct)
	w.kf64("under_pct", b.UnderPct)
	w.kint("datasets", b.Datasets)
	w.kint("sources", b.Sources)
	w.kint("points", b.Points)
	w.key("min_bytes")
	w.u64(b.MinBytes)
	w.kbool("out_of_sample", b.OutOfSample)
	w.end()
}

// writeCalibrated writes an estimate.Calibrated as encoding/json would.
func writeCalibrated(w *jw, c *estimate.Calibrated) {
	w.obj()
	writePrediction(w, c.Prediction)
	w.kstr("class", string(c.Class))
	w.kf64("latency_us", c.LatencyUs)
	w.kf64("plateau_busbw_GBps", c.PlateauBusBwGBps)
	w.kf64("ramp_bus_bytes", c.RampBusBytes)
	w.kbool("held", c.Held)
	if c.HeldFromBytes != 0 {
		w.key("held_from_bytes")
		w.u64(c.HeldFromBytes)
	}
	w.key("error_band")
	writeBand(w, c.Band)
	w.kf64("busbw_low_GBps", c.BusBwLowGBps)
	w.key("busbw_high_GBps")
	if c.BusBwHighGBps == nil {
		w.null()
	} else {
		w.f64(*c.BusBwHighGBps)
	}
	w.kint("n_datasets", c.NDatasets)
	w.key("datasets")
	if c.Datasets == nil {
		w.null()
	} else {
		w.strs(c.Datasets)
	}
	w.kint("n_sources", c.NSources)
	w.kstr("support", c.Support)
	w.end()
}

// writeEstimateResult writes the object of `ncclsim estimate --json`
// (playground/cmd/ncclsim/estimate.go, estimateOutput) for e.
func writeEstimateResult(w *jw, b *built, e *estimate.Estimate, f tune.Func, n uint64, dt tune.Datatype) {
	m := b.tune
	perRank := n
	if f == tune.AllGather || f == tune.ReduceScatter {
		perRank = n / uint64(m.Sys.NRanks)
	}
	w.obj()
	w.kstr("coll", f.String())
	w.key("bytes")
	w.u64(n)
	w.key("bytes_per_rank")
	w.u64(perRank)
	w.kstr("dtype", dt.String())
	w.kint("nranks", m.Sys.NRanks)
	w.kint("nnodes", m.Sys.NNodes)
	w.kstr("topology", b.host.name)
	writePrediction(w, e.Calibrated.Prediction)
	w.kstr("source", "calibrated")
	w.key("model")
	w.obj()
	writePrediction(w, e.Model)
	w.kf64("latency_us", e.ModelLatencyUs)
	w.kf64("bandwidth_GBps", e.ModelBandwidthGBps)
	w.key("costs")
	w.obj()
	// encoding/json writes map keys sorted.
	var keys []string
	vals := map[string]float32{}
	for a := tune.Algorithm(0); a < tune.NumAlgorithms; a++ {
		for p := tune.Protocol(0); p < tune.NumProtocols; p++ {
			if v := e.Costs[a][p]; v != tune.Ignore {
				k := a.String() + "/" + p.String()
				keys = append(keys, k)
				vals[k] = v
			}
		}
	}
	sortStrings(keys)
	for _, k := range keys {
		w.kf64(k, float64(vals[k]))
	}
	w.end()
	w.end()
	w.key("calibrated")
	writeCalibrated(w, &e.Calibrated)
	w.key("env")
	writeEnv(w, b.env)
	w.key("problems")
	writeProblems(w, b.problems)
	w.end()
}

// sortStrings sorts a short slice in place.
func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Estimate answers one `ncclsim estimate` question: "result" is the object
// the CLI prints for the same inputs (the calibrated estimate on top, NCCL's
// model under "model"), "command" the CLI line.
func (s *Session) Estimate(ctx context.Context, req *Request) Reply {
	f, n, dt, err := estimateInputs(req)
	if err != nil {
		return errorReply(err)
	}
	b, es, err := s.modelAndEstimator(ctx, req)
	if err != nil {
		return errorReply(err)
	}
	e, err := es.Estimate(tune.Request{Func: f, NBytes: n, Datatype: dt})
	if err != nil {
		return errorReply(selectField(b.tune, err))
	}
	var w jw
	w.obj()
	w.key("result")
	writeEstimateResult(&w, b, &e, f, n, dt)
	w.kstr("command", Command("estimate", req))
	w.end()
	return Reply{JSON: w.String()}
}
