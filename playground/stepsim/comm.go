package stepsim

import (
	"fmt"
	"sync"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// CommCost is the time of one collective and how it runs.
type CommCost struct {
	Us    float64 `json:"time_us"`
	Algo  string  `json:"algo"`
	Proto string  `json:"proto"`
	// BusBwGBps is nccl-tests' bus bandwidth of the collective.
	BusBwGBps float64 `json:"busbw_GBps"`
}

// Comm times collectives on one communicator.
type Comm interface {
	// NRanks is the number of ranks (GPUs) of the communicator.
	NRanks() int
	// Cost times collective f over nBytes (NCCL's and nccl-tests' size:
	// the whole gathered buffer for AllGather and ReduceScatter) of
	// elements of type dt.
	Cost(f tune.Func, nBytes uint64, dt tune.Datatype) (CommCost, error)
}

// EstimatorComm times collectives with the estimator: the calibrated time,
// or NCCL's model time when Model is set. It caches answers and is safe for
// concurrent use.
type EstimatorComm struct {
	Sys   *estimate.System
	Model bool

	mu    sync.Mutex
	cache map[commKey]CommCost
}

type commKey struct {
	f  tune.Func
	n  uint64
	dt tune.Datatype
}

// NewEstimatorComm wraps sys; model selects NCCL's model time instead of
// the calibrated one.
func NewEstimatorComm(sys *estimate.System, model bool) *EstimatorComm {
	return &EstimatorComm{Sys: sys, Model: model, cache: map[commKey]CommCost{}}
}

// NRanks implements Comm.
func (c *EstimatorComm) NRanks() int { return c.Sys.Model().Sys.NRanks }

// Cost implements Comm.
func (c *EstimatorComm) Cost(f tune.Func, nBytes uint64, dt tune.Datatype) (CommCost, error) {
	k := commKey{f, nBytes, dt}
	c.mu.Lock()
	if v, ok := c.cache[k]; ok {
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()
	e, err := c.Sys.Estimate(tune.Request{Func: f, NBytes: nBytes, Datatype: dt})
	if err != nil {
		return CommCost{}, fmt.Errorf("time %s of %d bytes: %w", f, nBytes, err)
	}
	p := e.Calibrated.Prediction
	if c.Model {
		p = e.Model
	}
	v := CommCost{Us: p.TimeUs, Algo: p.Algo, Proto: p.Proto, BusBwGBps: p.BusBwGBps}
	c.mu.Lock()
	if c.cache == nil {
		c.cache = map[commKey]CommCost{}
	}
	c.cache[k] = v
	c.mu.Unlock()
	return v, nil
}
