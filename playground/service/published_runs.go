package service

import (
	"math/bits"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// publishedRun is one published run of data/measurements as the estimator
// page lists it, with what the page matches it on: the preset it was
// measured on, the node count and the collective (tune.Func's String).
type publishedRun struct {
	preset string
	nodes  int
	coll   string
	m      Measurement
}

// publishedRuns (published_runs_data.go) is generated from the datasets
// of package estimate by TestPublishedRunsData (`go generate
// ./playground/service` after data/measurements changes): a table of
// constants the compiler lays out as data, where the datasets themselves
// are built by code (about 40 KB gzip of the estimator page's wasm). Never
// modified.
//
//go:generate go test -run ^TestPublishedRunsData$ -update-generated

// maxPageRowsPerOctave is how many rows of a published run the estimator
// page draws in each factor of two of the message size.
const maxPageRowsPerOctave = 4

// pageRows are the rows of a published run the estimator page draws: all
// of them, but at most maxPageRowsPerOctave in each factor of two of the
// size (the first ones), so that a run swept in 10 MiB steps (103
// rows between 1 MiB and 1 GiB) is drawn as the same curve with
// the points a log-scale chart can tell apart.
func pageRows(rows []estimate.Row) []estimate.Row {
	var out []estimate.Row
	var count [65]int // by bits.Len64 of the size, 0..64
	for _, r := range rows {
		o := bits.Len64(r.Bytes)
		if count[o] < maxPageRowsPerOctave {
			out = append(out, r)
		}
		count[o]++
	}
	return out
}

// assignments writes env as a published run's Env holds it: NAME=VALUE,
// sorted by name (ncclenv has trimmed each name and value, and the last
// assignment of a name won, as NCCL reads its environment). The result is
// never nil.
func assignments(env ncclenv.Env) []string {
	names := env.Names()
	out := make([]string, 0, len(names))
	for _, n := range names {
		v, _ := env.Lookup(n)
		out = append(out, n+"="+v)
	}
	return out
}
